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
    large captures are loaded, and a pass that allocates much triggers dozens of them."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
