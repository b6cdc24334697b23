"""The one ``--fusion`` grammar of every command: which records of a capture a name selects.

``--fusion`` (``show``, ``repro``, ``report``) names records of a capture (:func:`fusion_positions`):

- ``#N``: the record at position N, from ``#0``, as ``fusiondiff show`` numbers them (two records
  can share every name: one region run with an aligned and a misaligned input);
- a name (``nvFusion0``), a name with its pass as reports print it (``nvFusion0 [forward]``), a key
  (``forward/nvFusion0/1a2b3c4d5e6f``) or the start of a key (``forward/nvFusion0``).

Every record it names is selected (``repro`` wants one and says so when there are more). A name
that matches nothing is one line with at most :data:`MAX_NAMED` candidates ("did you mean"), never
a list of every record. A report's narrowing by it is :mod:`fusiondiff.report.views.filters`.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Sequence

from fusiondiff.records.errors import FusionDiffError
from fusiondiff.records.model import FusionRecord, traced_name

MAX_NAMED = 5
"""Records an error names at most: every one of a small capture, else the closest candidates."""
POSITION = re.compile(r"#([0-9]{1,9})")


def names_record(spec: str, name: str, trace: str | None, key: str) -> bool:
    """``spec`` names this record by name, name with its pass, key or start of its key."""
    return spec in (name, key, traced_name(name, trace)) or ("/" in spec and key.startswith(spec))


def _suggestions(fusions: Sequence[FusionRecord], spec: str) -> str:
    """At most :data:`MAX_NAMED` records like ``spec``, or the first few names when none is."""
    first: dict[str, int] = {}
    for i, f in enumerate(fusions):
        for text in (f.name, traced_name(f.name, f.trace), f.key):
            first.setdefault(text, i)
    close = difflib.get_close_matches(spec, list(first), n=3, cutoff=0.6)
    if close:
        return "did you mean " + ", ".join(f"{c} (#{first[c]})" for c in close) + "?"
    names = list(dict.fromkeys(f.name for f in fusions))[:3]
    return f"its names include {', '.join(names)}."


def no_fusion(fusions: Sequence[FusionRecord], spec: str, origin: str) -> str:
    """The one-line error for a ``--fusion`` that names none of ``fusions``."""
    if len(fusions) <= MAX_NAMED:
        available = ", ".join(f"{f.name} ({f.key}, #{i})" for i, f in enumerate(fusions))
        return f"{origin} has no fusion {spec!r}; available: {available}"
    return (
        f"{origin} has no fusion {spec!r}; {_suggestions(fusions, spec)} It holds {len(fusions)} records, "
        f"#0 to #{len(fusions) - 1} (`fusiondiff show` lists them)"
    )


def matching_positions(fusions: Sequence[FusionRecord], spec: str) -> list[int]:
    position = POSITION.fullmatch(spec)
    if position:
        return [int(position[1])] if int(position[1]) < len(fusions) else []
    return [i for i, f in enumerate(fusions) if names_record(spec, f.name, f.trace, f.key)]


def fusion_positions(fusions: Sequence[FusionRecord], spec: str, origin: str = "the capture") -> list[int]:
    """The positions of the records ``spec`` names (see the module docstring), in capture order.
    Raises :class:`FusionDiffError` when it names none."""
    found = matching_positions(fusions, spec)
    if found:
        return found
    if POSITION.fullmatch(spec):
        held = f"#0 to #{len(fusions) - 1}" if fusions else "none"
        raise FusionDiffError(f"{origin} has no fusion {spec}: it holds {len(fusions)}, {held}")
    raise FusionDiffError(no_fusion(fusions, spec, origin))


def several_named(fusions: Sequence[FusionRecord], spec: str, positions: Sequence[int], origin: str) -> str:
    """The one-line error for a ``--fusion`` that names several records where one is needed."""
    listed = ", ".join(f"#{i} {fusions[i].key}" for i in positions[:MAX_NAMED])
    more = f" and {len(positions) - MAX_NAMED} more" if len(positions) > MAX_NAMED else ""
    return f"{spec!r} names {len(positions)} fusions in {origin}: {listed}{more}; give the key or #N"


def capture_positions(fusions: Sequence[FusionRecord], fusion: str | None, top: int | None, origin: str) -> list[int]:
    """What ``show`` prints: the positions ``fusion`` names (every record without it), then of those
    the ``top`` with the largest median time, largest first."""
    positions = list(range(len(fusions))) if fusion is None else fusion_positions(fusions, fusion, origin)
    if top is not None:

        def median(i: int) -> float:
            value = fusions[i].timing.median_ns
            return -1.0 if math.isnan(value) else value

        positions = sorted(positions, key=median, reverse=True)[:top]
    return positions
