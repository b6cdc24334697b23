"""Timing verdicts: is B faster, slower, or the same as A, judged from the raw samples.

Verdicts are always about **B relative to A**: ``SLOWER`` means B's samples take longer.
The rule, in order:

1. A side with no samples: ``AMBIGUOUS``.
2. Medians closer than the noise floor, ``max(2 % of A's median, 300 ns)``: ``SAME``, even when
   the test calls the gap significant. A few hundred ns is what L2 state, clocks and profiler
   jitter move a single kernel between runs; a smaller gap does not explain a slowdown.
3. Two-sided Mann-Whitney U p-value below ``ALPHA`` (0.01): ``FASTER`` or ``SLOWER``.
4. Fewer than ``MIN_SAMPLES`` (10) samples on a side: the test has too little power (one sample
   each can never reach p < 0.01), so a gap counts only when it is large, at least
   ``LARGE_GAP_RATIO`` (1.25x), and the samples of the two sides do not overlap; else
   ``AMBIGUOUS``. The verdict then carries a warning.
5. Otherwise (a gap above the floor the test does not confirm): ``AMBIGUOUS``; take more samples.

Verdicts are computed in batches (:func:`compare_timings`) because a capture can hold thousands of
kernels: medians and the U test run vectorised over all pairs with the same sample counts.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from fusiondiff.diff.records import TimingVerdict, Verdict
from fusiondiff.model import Timing
from fusiondiff.units import duration, durations

ALPHA = 0.01
"""Significance level of the two-sided Mann-Whitney U test."""
RELATIVE_FLOOR = 0.02
"""Median gaps below this fraction of A's median are SAME."""
ABSOLUTE_FLOOR_NS = 300.0
"""Median gaps below this many ns are SAME, whatever the relative gap."""
MIN_SAMPLES = 10
"""Fewer samples than this on a side triggers the large-gap rule and a warning."""
LARGE_GAP_RATIO = 1.25
"""With few samples, the slower median must be at least this multiple of the faster one."""
NOISY_IQR_FRACTION = 0.10
"""An IQR above this fraction of the median earns a noise warning."""


def compare_timing(a: Timing, b: Timing) -> TimingVerdict:
    """The verdict for one pair of timings (B relative to A)."""
    return compare_timings([(a, b)])[0]


def compare_timings(pairs: Sequence[tuple[Timing, Timing]]) -> list[TimingVerdict]:
    """Verdicts for many pairs of timings at once, in the order given."""
    med_a, iqr_a = _medians_and_iqrs([a for a, _ in pairs])
    med_b, iqr_b = _medians_and_iqrs([b for _, b in pairs])
    needs_test = [
        i
        for i, (a, b) in enumerate(pairs)
        if a.count >= 2 and b.count >= 2 and abs(med_b[i] - med_a[i]) >= _noise_floor(med_a[i])
    ]
    p_values = _mann_whitney(pairs, needs_test)
    return [_verdict(a, b, med_a[i], med_b[i], iqr_a[i], iqr_b[i], p_values.get(i)) for i, (a, b) in enumerate(pairs)]


def _noise_floor(median_a_ns: float) -> float:
    return max(RELATIVE_FLOOR * median_a_ns, ABSOLUTE_FLOOR_NS)


def _medians_and_iqrs(timings: Sequence[Timing]) -> tuple[list[float], list[float]]:
    """Median and IQR of each timing (same definitions as :class:`Timing`), vectorised per count."""
    medians = [math.nan] * len(timings)
    iqrs = [0.0] * len(timings)
    by_count: dict[int, list[int]] = defaultdict(list)
    for i, t in enumerate(timings):
        by_count[t.count].append(i)
    for count, indices in by_count.items():
        if count == 0:
            continue
        samples = np.asarray([timings[i].samples_ns for i in indices], dtype=float)
        group_medians = np.median(samples, axis=1)
        # numpy's default (linear) percentile is the "inclusive" quantile Timing.iqr_ns uses.
        group_iqrs = np.subtract(*np.percentile(samples, [75, 25], axis=1)) if count >= 2 else None
        for row, i in enumerate(indices):
            medians[i] = float(group_medians[row])
            iqrs[i] = float(group_iqrs[row]) if group_iqrs is not None else 0.0
    return medians, iqrs


def _mann_whitney(pairs: Sequence[tuple[Timing, Timing]], indices: Sequence[int]) -> dict[int, float]:
    """Two-sided U-test p-values for the given pairs, one scipy call per (count A, count B)."""
    if not indices:
        return {}
    # imported here: scipy.stats costs about half a second to import, and a diff whose medians all
    # agree within noise asks for no test
    from scipy.stats import mannwhitneyu

    by_counts: dict[tuple[int, int], list[int]] = defaultdict(list)
    for i in indices:
        by_counts[(pairs[i][0].count, pairs[i][1].count)].append(i)
    p_values: dict[int, float] = {}
    for group in by_counts.values():
        x = np.asarray([pairs[i][0].samples_ns for i in group], dtype=float)
        y = np.asarray([pairs[i][1].samples_ns for i in group], dtype=float)
        result = mannwhitneyu(x, y, alternative="two-sided", axis=1)
        for row, i in enumerate(group):
            p = float(np.atleast_1d(result.pvalue)[row])
            # Every sample tied (identical constant samples): no evidence of a difference.
            p_values[i] = 1.0 if math.isnan(p) else p
    return p_values


def _verdict(
    a: Timing, b: Timing, med_a: float, med_b: float, iqr_a: float, iqr_b: float, p: float | None
) -> TimingVerdict:
    warnings = _sample_warnings("A", a.count, med_a, iqr_a) + _sample_warnings("B", b.count, med_b, iqr_b)
    verdict, reason = _decide(a, b, med_a, med_b, p)
    ratio = med_b / med_a if med_a > 0 and not math.isnan(med_b) else math.nan
    return TimingVerdict(
        median_a_ns=med_a,
        median_b_ns=med_b,
        iqr_a_ns=iqr_a,
        iqr_b_ns=iqr_b,
        count_a=a.count,
        count_b=b.count,
        ratio=ratio,
        p_value=p,
        verdict=verdict,
        reason=reason,
        warnings=warnings,
    )


def _decide(a: Timing, b: Timing, med_a: float, med_b: float, p: float | None) -> tuple[Verdict, str]:
    if a.count == 0 or b.count == 0:
        side = "A" if a.count == 0 else "B"
        return "AMBIGUOUS", f"no samples on side {side}"
    gap = med_b - med_a
    if math.isnan(gap):
        return "AMBIGUOUS", "a median is not a number (NaN samples)"
    floor = _noise_floor(med_a)
    if abs(gap) < floor:
        shown_gap, shown_floor = durations(gap, floor, signed=(True,))
        return "SAME", f"median gap {shown_gap} is within the noise floor of {shown_floor}"
    direction: Verdict = "SLOWER" if gap > 0 else "FASTER"
    if p is not None and p < ALPHA:
        return direction, f"median gap {duration(gap, signed=True)}, Mann-Whitney p={p:.2g} < {ALPHA}"
    if min(a.count, b.count) < MIN_SAMPLES:
        low, high = sorted((med_a, med_b))
        separated = max(a.samples_ns) < min(b.samples_ns) or max(b.samples_ns) < min(a.samples_ns)
        if low > 0 and high / low >= LARGE_GAP_RATIO and separated:
            return direction, (
                f"only {a.count} vs {b.count} samples, but the gap is {high / low:.2f}x "
                f"(>= {LARGE_GAP_RATIO}x) and the samples do not overlap"
            )
        return "AMBIGUOUS", (
            f"only {a.count} vs {b.count} samples: a gap of {duration(gap, signed=True)} needs >= {LARGE_GAP_RATIO}x "
            f"with non-overlapping samples, or >= {MIN_SAMPLES} samples a side"
        )
    return "AMBIGUOUS", (
        f"median gap {duration(gap, signed=True)} is above the noise floor but not significant "
        f"(p={p:.2g} >= {ALPHA}): take more samples"
    )


def _sample_warnings(side: str, count: int, median: float, iqr: float) -> tuple[str, ...]:
    warnings = []
    if count < MIN_SAMPLES:
        warnings.append(f"side {side} has {count} sample(s), fewer than {MIN_SAMPLES}")
    if count >= 2 and median > 0 and iqr > NOISY_IQR_FRACTION * median:
        warnings.append(f"side {side} is noisy: IQR is {100 * iqr / median:.0f} % of the median")
    return tuple(warnings)
