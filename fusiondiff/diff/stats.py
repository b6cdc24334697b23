"""Sample-level verdicts: is B faster, slower, or the same as A, judged from the raw samples of one
process a side. This answers whether two processes differ, not whether two programs do: kernel
time is judged between processes (:mod:`fusiondiff.diff.noise`, which reads its sample arrays,
:class:`SampleArrays`, from here); the host question's ``fd.execute`` times are judged here.

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

:func:`median_interval` is the distribution-free confidence interval of a median (order statistics),
which :mod:`fusiondiff.diff.speed_of_light` combines into the noise floor of a prediction.

Verdicts are computed in batches (:func:`compare_timings`) because a capture can hold thousands of
kernels: medians and the U test run vectorised over all pairs with the same sample counts, each
side's samples converted to arrays once, and the verdicts read plain numbers from them.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from fusiondiff.diff.rank_test import mann_whitney_p
from fusiondiff.diff.records import TimingVerdict, Verdict
from fusiondiff.records.model import Timing
from fusiondiff.records.units import duration, durations

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


def median_interval(samples_ns: Sequence[float], confidence: float = 1 - ALPHA) -> tuple[float, float]:
    """A distribution-free confidence interval of the median of ``samples_ns``: the order statistics
    ``x(k)`` and ``x(n+1-k)`` with the largest ``k`` whose coverage, ``1 - 2 P(Binomial(n, 1/2) < k)``,
    is still at least ``confidence``. With too few samples for that coverage (7 or fewer at 99 %),
    the whole range, the widest the samples allow. NaN for no samples."""
    ordered = sorted(samples_ns)
    n = len(ordered)
    if n == 0:
        return math.nan, math.nan
    # exact integers: P(Binomial(n, 1/2) <= j) * 2**n, summed while the tail stays in (1 - confidence) / 2
    allowed = (1 - confidence) / 2 * 2**n
    k, tail = 1, 1  # tail: 2**n * P(B <= k - 1) for the next k to try
    while k < (n + 1) // 2 and tail + math.comb(n, k) <= allowed:
        tail += math.comb(n, k)
        k += 1
    if tail > allowed:  # even the range covers less than asked: it is still the widest interval
        k = 1
    return ordered[k - 1], ordered[n - k]


def compare_timing(a: Timing, b: Timing) -> TimingVerdict:
    """The verdict for one pair of timings (B relative to A)."""
    return compare_timings([(a, b)])[0]


def compare_timings(pairs: Sequence[tuple[Timing, Timing]]) -> list[TimingVerdict]:
    """Verdicts for many pairs of timings at once, in the order given."""
    a = SampleArrays([a for a, _ in pairs])
    b = SampleArrays([b for _, b in pairs])
    gaps = b.medians - a.medians
    floors = _noise_floors(a.medians)
    # NaN medians (no samples) compare False, as the count test already leaves them out
    tested = (a.counts >= 2) & (b.counts >= 2) & (np.abs(gaps) >= floors)
    p_values = _mann_whitney(a, b, np.flatnonzero(tested))
    # one conversion to Python numbers for all pairs: the verdicts' fields hold floats and ints
    counts_a, counts_b = a.counts.tolist(), b.counts.tolist()
    med_a, med_b, iqr_a, iqr_b = a.medians.tolist(), b.medians.tolist(), a.iqrs.tolist(), b.iqrs.tolist()
    floor = floors.tolist()
    return [
        _verdict(ta, tb, counts_a[i], counts_b[i], med_a[i], med_b[i], iqr_a[i], iqr_b[i], floor[i], p_values.get(i))
        for i, (ta, tb) in enumerate(pairs)
    ]


def _noise_floors(medians_a_ns: np.ndarray) -> np.ndarray:
    """The noise floor of each of A's medians: :data:`RELATIVE_FLOOR` of it, at least
    :data:`ABSOLUTE_FLOOR_NS`."""
    return np.maximum(RELATIVE_FLOOR * medians_a_ns, ABSOLUTE_FLOOR_NS)


class SampleArrays:
    """One side's timings as arrays: sample counts, medians (NaN without samples) and IQRs (0 with
    fewer than two samples), with the same definitions as :class:`Timing`; and the samples
    themselves, one matrix per sample count, which the U test reads again."""

    def __init__(self, timings: Sequence[Timing]) -> None:
        # Loops in C where they can be (map, chain, fromiter): tens of thousands of timings of
        # tens of samples each, as Python floats, are the bulk of a large diff's memory reads.
        samples_ns = [t.samples_ns for t in timings]
        self.counts = np.fromiter(map(len, samples_ns), dtype=np.int64, count=len(timings))
        self.medians = np.full(len(timings), math.nan)
        self.iqrs = np.zeros(len(timings))
        self.rows = np.zeros(len(timings), dtype=np.intp)
        """Each timing's row in its count's matrix."""
        self.matrices: dict[int, np.ndarray] = {}
        for count in sorted(set(self.counts.tolist())):  # np.unique's, without its import of numpy.ma
            if count == 0:
                continue
            indices = np.flatnonzero(self.counts == count)
            group = samples_ns if len(indices) == len(timings) else [samples_ns[i] for i in indices.tolist()]
            flat = np.fromiter(itertools.chain.from_iterable(group), dtype=float, count=len(group) * count)
            samples = flat.reshape(len(group), count)
            self.matrices[count] = samples
            self.rows[indices] = np.arange(len(indices))
            self.medians[indices], self.iqrs[indices] = _medians_and_iqrs(samples)

    def samples(self, count: int, indices: np.ndarray) -> np.ndarray:
        """The samples of the timings at ``indices``, all of ``count`` samples, one row each."""
        return self.matrices[count][self.rows[indices]]


def _mann_whitney(a: SampleArrays, b: SampleArrays, indices: np.ndarray) -> dict[int, float]:
    """Two-sided U-test p-values for the pairs at ``indices``, one call per (count A, count B)."""
    # The groups are the pairs of each (count A, count B), whole: the method (exact or normal) is
    # chosen for a call from whether any row of it has ties, as scipy's mannwhitneyu chooses it.
    by_counts: dict[tuple[int, int], list[int]] = defaultdict(list)
    for i, count_a, count_b in zip(indices.tolist(), a.counts[indices].tolist(), b.counts[indices].tolist()):
        by_counts[(count_a, count_b)].append(i)
    p_values: dict[int, float] = {}
    for (count_a, count_b), group in by_counts.items():
        rows = np.asarray(group)
        for i, p in zip(group, mann_whitney_p(a.samples(count_a, rows), b.samples(count_b, rows))):
            # Every sample tied (identical constant samples): no evidence of a difference.
            p_values[i] = 1.0 if math.isnan(p) else p
    return p_values


def _verdict(
    a: Timing,
    b: Timing,
    count_a: int,
    count_b: int,
    med_a: float,
    med_b: float,
    iqr_a: float,
    iqr_b: float,
    floor: float,
    p: float | None,
) -> TimingVerdict:
    warnings = _sample_warnings("A", count_a, med_a, iqr_a) + _sample_warnings("B", count_b, med_b, iqr_b)
    verdict, reason = _decide(a, b, count_a, count_b, med_a, med_b, floor, p)
    ratio = med_b / med_a if med_a > 0 and not math.isnan(med_b) else math.nan
    return TimingVerdict(
        median_a_ns=med_a,
        median_b_ns=med_b,
        iqr_a_ns=iqr_a,
        iqr_b_ns=iqr_b,
        count_a=count_a,
        count_b=count_b,
        ratio=ratio,
        p_value=p,
        verdict=verdict,
        reason=reason,
        warnings=warnings,
    )


def _decide(
    a: Timing, b: Timing, count_a: int, count_b: int, med_a: float, med_b: float, floor: float, p: float | None
) -> tuple[Verdict, str]:
    if count_a == 0 or count_b == 0:
        side = "A" if count_a == 0 else "B"
        return "AMBIGUOUS", f"no samples on side {side}"
    gap = med_b - med_a
    if math.isnan(gap):
        return "AMBIGUOUS", "a median is not a number (NaN samples)"
    if abs(gap) < floor:
        shown_gap, shown_floor = durations(gap, floor, signed=(True,))
        return "SAME", f"median gap {shown_gap} is within the noise floor of {shown_floor}"
    direction: Verdict = "SLOWER" if gap > 0 else "FASTER"
    if p is not None and p < ALPHA:
        return direction, f"median gap {duration(gap, signed=True)}, Mann-Whitney p={p:.2g} < {ALPHA}"
    if min(count_a, count_b) < MIN_SAMPLES:
        low, high = sorted((med_a, med_b))
        separated = max(a.samples_ns) < min(b.samples_ns) or max(b.samples_ns) < min(a.samples_ns)
        if low > 0 and high / low >= LARGE_GAP_RATIO and separated:
            return direction, (
                f"only {count_a} vs {count_b} samples, but the gap is {high / low:.2f}x "
                f"(>= {LARGE_GAP_RATIO}x) and the samples do not overlap"
            )
        return "AMBIGUOUS", (
            f"only {count_a} vs {count_b} samples: a gap of {duration(gap, signed=True)} needs >= {LARGE_GAP_RATIO}x "
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


def _medians_and_iqrs(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's median and IQR (0 for one sample; else NaN for a row holding a NaN), from one sort: the
    values, to the bit, of ``np.median`` and of ``np.percentile``'s default (linear) quantiles,
    the "inclusive" quantile :attr:`Timing.iqr_ns` uses; the two took twice the sort's time."""
    count = samples.shape[1]
    ordered = np.sort(samples, axis=1)  # NaN sorts last
    half = count // 2
    medians = ordered[:, half] if count % 2 else (ordered[:, half - 1] + ordered[:, half]) / 2
    with np.errstate(invalid="ignore"):  # an infinite sample's row: NaN, as numpy gives it, unwarned
        iqrs = _quantile(ordered, 0.75) - _quantile(ordered, 0.25) if count >= 2 else np.zeros(len(samples))
    unknown = np.isnan(ordered[:, -1])
    if unknown.any():
        medians = np.where(unknown, math.nan, medians)
        iqrs = np.where(unknown, math.nan, iqrs) if count >= 2 else iqrs
    return medians, iqrs


def _quantile(ordered: np.ndarray, q: float) -> np.ndarray:
    """The ``q`` quantile of each sorted row, interpolated between its two nearest order statistics
    as numpy's linear method interpolates them (from the upper one when past half way)."""
    at = (ordered.shape[1] - 1) * q
    below = math.floor(at)
    weight = at - below
    low, high = ordered[:, below], ordered[:, below + 1]
    step = high - low
    return high - step * (1 - weight) if weight >= 0.5 else low + step * weight
