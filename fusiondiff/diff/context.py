"""What every finding rule gets to look at, and the arithmetic rules share (gaps, labels).

Rules say what they found as data (:class:`~fusiondiff.diff.records.Evidence`); no words or units
are chosen here: :mod:`fusiondiff.report.words.wording` writes them."""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from fusiondiff.diff.causes import node
from fusiondiff.diff.clocks import TimedClock, max_clock_mhz, timed_clock
from fusiondiff.diff.records import (
    Category,
    Evidence,
    Finding,
    FusionPair,
    KernelAgainstPeaks,
    KernelPair,
    PropertyChange,
    TimingVerdict,
)
from fusiondiff.diff.speed_of_light import against_peaks
from fusiondiff.records.blocks import FusionTimeline
from fusiondiff.records.model import Capture, FusionRecord


@dataclass(frozen=True)
class RuleContext:
    """The two captures and what matching, comparison and statistics made of them."""

    a: Capture
    b: Capture
    pairs: tuple[FusionPair, ...]
    changes: tuple[PropertyChange, ...]
    """Capture-level changes (environment, NVFUSER_* variables, clocks, protocol)."""

    @functools.cached_property
    def records(self) -> tuple[tuple[FusionRecord, FusionRecord], ...]:
        """Each pair's records, A's and B's, in the order of :attr:`pairs`: looked up once, since
        many rules walk every pair's records."""
        return tuple((self.a.fusions[p.index_a], self.b.fusions[p.index_b]) for p in self.pairs)

    @functools.cached_property
    def timelines(self) -> tuple[tuple[FusionPair, FusionTimeline, FusionTimeline], ...]:
        """The pairs that ran on both sides with an SM timeline recorded on both, with A's and B's
        timeline: what the block rules read, found in one walk of the pairs for all of them."""
        return tuple(
            (pair, fa.sm_timeline, fb.sm_timeline)
            for pair, (fa, fb) in zip(self.pairs, self.records)
            if fa.sm_timeline is not None and fb.sm_timeline is not None and not pair.failed
        )

    @functools.cached_property
    def timed_clocks(self) -> tuple[TimedClock, TimedClock]:
        """The SM clock each capture's samples ran at (:func:`~fusiondiff.diff.clocks.timed_clock`),
        idle readings told apart by the two GPUs' highest clock: read by a rule and by the diff's
        warnings, each reading of every fusion walked once."""
        limit = max_clock_mhz(self.a, self.b)
        return timed_clock(self.a, limit), timed_clock(self.b, limit)

    @functools.cached_property
    def against_peaks(self) -> tuple[KernelAgainstPeaks, ...]:
        """Each matched kernel against the two GPUs' measured peaks (empty where a capture has
        none): the GPU's rule names those off the prediction, and the diff keeps them all."""
        return against_peaks(self.a, self.b, self.pairs)

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
    """Absolute median gap, or 0 when the verdict is SAME, nothing was measured (a 0 ns side's gap
    is no time anything took) or a median is missing."""
    gap = abs(timing.gap_ns)
    return 0.0 if timing.verdict in ("SAME", "NOT MEASURED") or math.isnan(gap) else gap


def fusion_gap_ns(pair: FusionPair) -> float:
    return verdict_gap_ns(pair.timing)


def kernel_gap_ns(kernel: KernelPair) -> float:
    return verdict_gap_ns(kernel.timing)


def median_or_none(values: Sequence[float]) -> float | None:
    """The median of ``values``; ``None`` where there are none (a side that did not record it)."""
    return statistics.median(values) if values else None


def kernel_label(pair: FusionPair, kernel: KernelPair) -> str:
    return f"{pair.label}/{kernel.normalized_name}"


def make_finding(
    rule: str,
    data: Sequence[Evidence],
    fusions: Sequence[str],
    kernels: Sequence[str] = (),
    *,
    evidenced: bool = True,
) -> Finding:
    """A finding of the node ``rule`` before the ledger counts it, its evidence as data
    (:mod:`fusiondiff.report.words.wording` words it); its role and question are the causal model's
    (:mod:`fusiondiff.diff.causes`). ``evidenced``: False where the rule saw the node but no sign
    that it acted."""
    n = node(rule)
    return Finding(
        rule=rule,
        role=n.role,
        fusions=tuple(fusions),
        kernels=tuple(kernels),
        data=tuple(data),
        question=n.question,
        evidenced=evidenced,
    )
