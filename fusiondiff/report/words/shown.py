"""How a recorded value reads inside a finding's words: the helpers every wording module shares."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fusiondiff.diff.records import Evidence, EvidenceValue
from fusiondiff.records.units import number


def show(value: object) -> str:
    """A recorded value for evidence text: sequences as ``[a, b]``, ``None`` as ``unset``, an
    integral float as an integer (an index range recorded as floats reads ``[131, 128243]``)."""
    if value is None:
        return "unset"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(show(v) for v in value) + "]"
    return number(value)


def dims(value: object) -> str:
    """A launch dimension (``[128, 1, 1]``) as ``128x1x1``."""
    if isinstance(value, (list, tuple)):
        return "x".join(str(v) for v in value)
    return show(value)


def mib(n_bytes: float) -> str:
    return f"{n_bytes / 2**20:.1f} MiB"


def limited(lines: Sequence[str], limit: int = 12) -> list[str]:
    """At most ``limit`` evidence lines, saying how many were left out."""
    if len(lines) <= limit:
        return list(lines)
    return [*lines[:limit], f"... and {len(lines) - limit} more"]


def ns(value: EvidenceValue) -> float:
    """A time from evidence: NaN where it was not measured (``None`` once read back from JSON)."""
    return float(value) if isinstance(value, (int, float)) else float("nan")


def side_of(e: Evidence) -> str:
    """The side a one-sided piece of evidence is on (its value there, ``None`` on the other)."""
    return "A" if e.a is not None else "B"


def on_side(e: Evidence) -> EvidenceValue:
    """The value of a one-sided piece of evidence."""
    return e.a if e.a is not None else e.b


def items(value: object) -> tuple[Any, ...]:
    """The items of a sequence of evidence; none for anything else."""
    return tuple(value) if isinstance(value, (list, tuple)) else ()


def by_field(data: Sequence[Evidence]) -> dict[str, Evidence]:
    """The evidence by field (the first of each)."""
    found: dict[str, Evidence] = {}
    for e in data:
        found.setdefault(e.field, e)
    return found


def label(finding_fusions: Sequence[str]) -> str:
    """The fusion pair a per-fusion finding is about."""
    return finding_fusions[0] if finding_fusions else "?"
