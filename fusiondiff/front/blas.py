"""numpy's BLAS held to one thread for the commands that compare records.

numpy's wheels bring OpenBLAS, which starts a thread per core when numpy is imported; those
threads wait for work by spinning, and their spinning is CPU time of the command: 0.15 s of the
0.45 s a one-fusion ``fusiondiff diff`` took on a 2-core machine, 0.3 s of a 10,000-fusion
``diff --json`` (benchmarks/RESULTS.md). fusiondiff multiplies no matrices, so these commands
run with ``OPENBLAS_NUM_THREADS=1`` unless the user chose a thread count. The variable is read
when the library loads, set only for the command, and the environment is as it was after it: a
command that runs the user's program (capture, replay, roundtrip) is left alone.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

COMMANDS = frozenset({"diff", "report", "ranks", "timers", "show"})
"""The commands that only read records: no user program, no process of theirs that would need BLAS threads."""
CHOSEN = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
"""What OpenBLAS reads for its thread count: where the user set one, it is kept."""


@contextlib.contextmanager
def one_blas_thread(command: str | None) -> Iterator[None]:
    """Run the block with OpenBLAS held to one thread, where ``command`` is one of :data:`COMMANDS`
    and the user set no thread count; the variable is removed again after the block."""
    if command not in COMMANDS or any(name in os.environ for name in CHOSEN):
        yield
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        yield
    finally:
        os.environ.pop("OPENBLAS_NUM_THREADS", None)
