"""A timing verdict's record: B's time against A's, and how sure the data make it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fusiondiff.records.constraints import NaNFloat

Verdict = Literal["SAME", "FASTER", "SLOWER", "NOT MEASURED", "AMBIGUOUS", "FAILED"]
"""Timing verdict of side B relative to side A (``SLOWER``: B takes longer than A). ``SAME``: the
gap is within what moves a fusion between processes (:mod:`fusiondiff.diff.noise`). ``NOT
MEASURED``: a side has no samples, or a median of 0 ns: nothing to judge, never a pass.
``FAILED``: a side's execution of the fusion failed, so it has no samples (see
``FusionPair.failed``). ``AMBIGUOUS``: the sample-level test (:mod:`fusiondiff.diff.stats`) did
not confirm a gap above its floor; diff records written before kernel verdicts were judged
between processes hold it for kernel time too."""

Spread = Literal["", "calibration", "measured"]
"""Where a verdict's between-process spread came from: ``calibration``, the recorded table for
the GPU and the fusion's size (one process a side); ``measured``, the sides' own processes;
empty for a verdict judged on samples alone (host time) or written before."""


@dataclass(frozen=True)
class TimingVerdict:
    """Two timings compared: B relative to A. Kernel time is judged between processes
    (:mod:`fusiondiff.diff.noise`), host time on its samples (:mod:`fusiondiff.diff.stats`)."""

    median_a_ns: NaNFloat
    median_b_ns: NaNFloat
    iqr_a_ns: NaNFloat
    iqr_b_ns: NaNFloat
    count_a: int
    """Samples on side A."""
    count_b: int
    ratio: NaNFloat
    """``median_b_ns / median_a_ns``; NaN when either median is missing or A's is 0."""
    p_value: float | None
    """Two-sided Mann-Whitney U p-value of the sample-level test; ``None`` where it was not run
    (a side under two samples, a gap within its floor, and every verdict judged between processes)."""
    verdict: Verdict
    reason: str
    """Why this verdict, in one line (the rule that decided it)."""
    warnings: tuple[str, ...] = ()
    floor: NaNFloat = float("nan")
    """The smallest gap this pair's data could detect, as a natural log of B's median over A's:
    a gap within it is SAME ("SAME within +-X %"); NaN where no floor was set (not measured, or
    judged on samples alone)."""
    spread: Spread = ""
    spread_of: str = ""
    """Which spread: the calibration entry (``H200 10-50 us``) or the processes it was measured in."""
    processes_a: int = 1
    """Processes whose medians side A's verdict used (several captures of one program)."""
    processes_b: int = 1

    @property
    def gap_ns(self) -> float:
        """B's median minus A's median (positive: B is slower)."""
        return self.median_b_ns - self.median_a_ns
