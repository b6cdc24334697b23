"""Python's cyclic garbage collector paused around work over whole captures (loading, diffing)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the block (reference counting still frees
    everything that is not a cycle), and resume it after if it was running.

    For work over whole captures: each collection walks every object alive, millions once two
    large captures are loaded, and a pass that allocates much triggers dozens of them.

    On resuming, what the block made (the records of a capture, a diff) is handed to the oldest
    generation as it is (``gc.freeze`` then ``gc.unfreeze``: two list splices), so it is walked at
    the next full collection, whose timing Python keeps in proportion to the heap, and not at once
    by a pass over every young object: that pass took 0.04 s after a load of 1,000 fusions and 0.35
    to 0.7 s after one of 10,000 (more per object as the heap outgrows the CPU's caches), half the
    time of a 10,000-fusion load (benchmarks/RESULTS.md, issue #28). Nothing is kept alive by this:
    cyclic garbage among them is found by that full collection. Where the program has frozen
    objects itself (``gc.get_freeze_count()``), they are left frozen and the pass runs as before."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
