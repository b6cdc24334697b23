"""fusiondiff: explain why the same nvFuser fusion runs at different speeds in two places.

Pipeline: ``capture`` (live, inside a Thunder session) and ``replay`` (a repro script in a fresh
process) write capture files; ``diff`` compares two of them; ``report`` renders the result.
Importing this package needs neither torch nor a GPU.
"""

# No `from __future__` nor any import here: ``python -m fusiondiff`` and the console script import
# this package before the handler of :mod:`fusiondiff.console` notes a Ctrl-C, so a signal that
# lands while it runs meets nothing but these assignments.

_LAZY = {
    "__version__": "fusiondiff.records.version",
    "FusionDiffError": "fusiondiff.records.errors",
    "SCHEMA_VERSION": "fusiondiff.records.model",
    "Capture": "fusiondiff.records.model",
    "FusionRecord": "fusiondiff.records.model",
    "KernelRecord": "fusiondiff.records.model",
    "RecordingOptions": "fusiondiff.records.options",
    "load_capture": "fusiondiff.io.store",
    "save_capture": "fusiondiff.io.store",
}
"""Public names imported when first used: ``python -m fusiondiff`` imports this package before
its ``__main__``, so nothing here may take long enough for a Ctrl-C to land outside a handler."""


TYPE_CHECKING = False
if TYPE_CHECKING:  # what type checkers and editors see; at run time, __getattr__ below
    from fusiondiff.io.store import load_capture, save_capture
    from fusiondiff.records.errors import FusionDiffError
    from fusiondiff.records.model import SCHEMA_VERSION, Capture, FusionRecord, KernelRecord
    from fusiondiff.records.options import RecordingOptions


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'fusiondiff' has no attribute {name!r}")


__all__ = [
    "SCHEMA_VERSION",
    "Capture",
    "FusionDiffError",
    "FusionRecord",
    "KernelRecord",
    "RecordingOptions",
    "__version__",
    "capture",
    "load_capture",
    "save_capture",
]


def capture(*args, **kwargs):  # noqa: ANN002, ANN003
    """Record every nvFusion executed inside a ``with`` block. See :func:`fusiondiff.front.live.capture`."""
    from fusiondiff.front.live import capture as _capture

    return _capture(*args, **kwargs)
