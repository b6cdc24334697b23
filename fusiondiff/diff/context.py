"""What every finding rule gets to look at, and the arithmetic rules share (gaps, labels)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from fusiondiff.diff.records import Category, Finding, FusionPair, KernelPair, PropertyChange, Role, TimingVerdict
from fusiondiff.model import Capture, FusionRecord
from fusiondiff.units import duration, durations, number  # noqa: F401 - rules read them from here


@dataclass(frozen=True)
class RuleContext:
    """The two captures and what matching, comparison and statistics made of them."""

    a: Capture
    b: Capture
    pairs: tuple[FusionPair, ...]
    changes: tuple[PropertyChange, ...]
    """Capture-level changes (environment, NVFUSER_* variables, clocks, protocol)."""

    def fusion_a(self, pair: FusionPair) -> FusionRecord:
        return self.a.fusions[pair.index_a]

    def fusion_b(self, pair: FusionPair) -> FusionRecord:
        return self.b.fusions[pair.index_b]

    def capture_changes(self, category: Category) -> list[PropertyChange]:
        return [c for c in self.changes if c.category == category]

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(p.label for p in self.pairs)

    def total_gap_ns(self, pairs: Iterable[FusionPair] | None = None) -> float:
        """Summed fusion gaps: what a capture-wide circumstance can be blamed for."""
        return sum(fusion_gap_ns(p) for p in (self.pairs if pairs is None else pairs))


Rule = Callable[[RuleContext], Iterator[Finding]]
"""A finding rule: looks at the context, yields zero or more findings (rank left at 0)."""


def verdict_gap_ns(timing: TimingVerdict) -> float:
    """Absolute median gap, or 0 when the verdict is SAME or a median is missing."""
    gap = abs(timing.gap_ns)
    return 0.0 if timing.verdict == "SAME" or math.isnan(gap) else gap


def fusion_gap_ns(pair: FusionPair) -> float:
    return verdict_gap_ns(pair.timing)


def kernel_gap_ns(kernel: KernelPair) -> float:
    return verdict_gap_ns(kernel.timing)


def kernel_label(pair: FusionPair, kernel: KernelPair) -> str:
    return f"{pair.label}/{kernel.normalized_name}"


def make_finding(
    rule: str,
    role: Role,
    title: str,
    evidence: Sequence[str],
    fusions: Sequence[str],
    explained_ns: float,
    kernels: Sequence[str] = (),
) -> Finding:
    """A finding before ranking."""
    return Finding(
        rule=rule,
        title=title,
        role=role,
        evidence=tuple(evidence),
        fusions=tuple(fusions),
        kernels=tuple(kernels),
        explained_ns=float(explained_ns),
    )


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
