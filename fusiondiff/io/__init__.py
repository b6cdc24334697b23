"""Files: captures written and read (bounded, atomically, never over an input), the block level's
timeline arrays beside them, and the per-rank captures of one session found by their names.
Imports only :mod:`fusiondiff.records`."""
