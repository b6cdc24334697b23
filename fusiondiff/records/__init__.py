"""The records: the frozen data model every stage reads and writes (captures, fusions, kernels, the
block level's statistics, what the timing ran beside), their value rules and JSON codec, and the
small helpers every layer shares (errors, units, the run's progress and termination). Imports no
other layer."""
