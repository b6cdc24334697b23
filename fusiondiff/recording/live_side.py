"""What the live side needs, checked before a command starts any work.

``capture``, ``replay`` and the replays of ``roundtrip`` run nvFuser on a GPU, so they need torch
and nvFuser (``nvfuser_direct``) in this Python; ``diff``, ``show`` and the reports need neither.
Each command asks :func:`require` first: a package that is missing is named in one line with the
GPU machine's install command of README's "Install", before any script is written, any worker
started or any script run. Packages are looked up, not imported (importing torch takes seconds).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence

from fusiondiff.records.errors import MissingPackageError

LIVE_INSTALL = "python3 -m pip install -e '.[live]' nvfuser-cu130-torch210"
"""README's install command for a GPU machine (its "Install" section)."""

PACKAGES = {
    "torch": ("torch", "torch"),
    "nvfuser": ("nvfuser_direct", "nvFuser (nvfuser_direct)"),
}
"""What a command may need: the module looked up, and the package's name as said to the user."""


def _installed(module: str) -> bool:
    if module in sys.modules:
        return sys.modules[module] is not None  # None: the import system was told it is absent
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing(needs: Sequence[str] = tuple(PACKAGES)) -> list[str]:
    """The packages of ``needs`` (keys of :data:`PACKAGES`) that this Python cannot import, as named."""
    return [PACKAGES[n][1] for n in needs if not _installed(PACKAGES[n][0])]


def require(work: str, needs: Sequence[str] = tuple(PACKAGES)) -> None:
    """Raise :class:`MissingPackageError` naming what ``work`` (``the replay``) needs that is not
    installed, and how to install it."""
    absent = missing(needs)
    if not absent:
        return
    wanted = " and ".join(PACKAGES[n][1] for n in needs)
    if len(absent) == len(needs):
        which = "which are" if len(absent) > 1 else "which is"
    else:
        which = f"and {' and '.join(absent)} {'are' if len(absent) > 1 else 'is'}"
    raise MissingPackageError(
        f"{work} needs {wanted}, {which} not installed in this Python ({sys.executable}): install the live side "
        f'with `{LIVE_INSTALL}` (README, "Install": pick the nvFuser wheel for your CUDA and torch)'
    )
