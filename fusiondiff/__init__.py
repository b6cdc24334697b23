"""fusiondiff: explain why the same nvFuser fusion runs at different speeds in two places.

Pipeline: ``capture`` (live, inside a Thunder session) and ``replay`` (a repro script in a fresh
process) write capture files; ``diff`` compares two of them; ``report`` renders the result.
Importing this package needs neither torch nor a GPU.
"""

from fusiondiff.errors import FusionDiffError
from fusiondiff.model import SCHEMA_VERSION, Capture, FusionRecord, KernelRecord
from fusiondiff.store import load_capture, save_capture

__version__ = "0.1.0"

__all__ = [
    "SCHEMA_VERSION",
    "Capture",
    "FusionDiffError",
    "FusionRecord",
    "KernelRecord",
    "__version__",
    "capture",
    "load_capture",
    "save_capture",
]


def capture(*args, **kwargs):  # noqa: ANN002, ANN003
    """Record every nvFusion executed inside a ``with`` block. See :func:`fusiondiff.live.capture`."""
    from fusiondiff.live import capture as _capture

    return _capture(*args, **kwargs)
