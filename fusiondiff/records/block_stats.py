"""The block-level statistics of one instrumented run, computed from its CTA arrays.

A run is three arrays over the grid's CTAs (indexed by linear block id): start and end in ns
from the run's first start, and the SM. From them (:func:`run_stats`):

- **SMs used**, and the most CTAs one SM ran;
- **CTAs at once**: per SM, the largest number of its CTA intervals that overlap; the median over
  the SMs (see ``BlockStats.ctas_at_once`` for why not the largest);
- **waves**: per SM, its CTAs over the CTAs at once, rounded up; the SM that needed most. A grid
  that fits in one wave gives 1; a tail wave adds one;
- **tail**: the time the last 10 % of CTAs took, from the end by which 90 % of CTAs had ended to the
  last end;
- **start skew**: CTA starts from the first (median, p99), and per SM when it started its first CTA
  (median, latest): an SM held by other work starts its first CTA late;
- **CTA durations**: p10, median, p90, p99.

numpy only (no torch), so the views and tests run anywhere.
"""

from __future__ import annotations

import math
import statistics

import numpy as np
import numpy.typing as npt

from fusiondiff.records.blocks import BlockStats

Array = npt.NDArray[np.int64]

TAIL_SHARE = 0.10
"""The tail is the time the last 10 % of CTAs took."""


def _percentile(values: npt.NDArray[np.float64] | Array, q: float) -> float:
    return float(np.percentile(values, q)) if values.size else math.nan


def resident_per_sm(start: Array, end: Array, sm: Array) -> dict[int, int]:
    """The most CTAs seen at once on each SM: the largest number of its ``[start, end)`` intervals
    that overlap (one ending as another starts at the same ns does not overlap it)."""
    if start.size == 0:
        return {}
    times = np.concatenate([end, start])
    deltas = np.concatenate([-np.ones(end.size, np.int64), np.ones(start.size, np.int64)])
    sms = np.concatenate([sm, sm])
    # by SM, then time, ends before starts at the same time; each SM's deltas sum to 0, so one
    # running sum over all SMs starts again at 0 at every SM's first event
    order = np.lexsort((deltas, times, sms))
    running = np.cumsum(deltas[order])
    sorted_sms = sms[order]
    firsts = np.flatnonzero(np.r_[True, sorted_sms[1:] != sorted_sms[:-1]])
    peaks = np.maximum.reduceat(running, firsts)
    return {int(s): int(p) for s, p in zip(sorted_sms[firsts], peaks)}


def run_stats(start: Array, end: Array, sm: Array, sm_end: Array | None = None) -> BlockStats:
    """:class:`BlockStats` of one run (see the module docstring); ``start`` and ``end`` in ns."""
    start = np.asarray(start, dtype=np.int64)
    end = np.asarray(end, dtype=np.int64)
    sm = np.asarray(sm, dtype=np.int64)
    n = int(start.size)
    if n == 0:
        raise ValueError("a run without CTAs has no statistics")
    origin = int(start.min())
    start, end = start - origin, end - origin
    duration = (end - start).astype(np.float64)
    counts = np.bincount(sm)
    used = np.flatnonzero(counts)
    resident = resident_per_sm(start, end, sm)
    at_once = max(statistics.median_low(resident.values()), 1)
    waves = max(math.ceil(int(counts[s]) / at_once) for s in used)
    ends = np.sort(end)
    done_90 = ends[max(math.ceil((1 - TAIL_SHARE) * n) - 1, 0)]
    first = np.full(counts.size, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, sm, start)
    first_used = first[used].astype(np.float64)
    moved = 0 if sm_end is None else int(np.count_nonzero(np.asarray(sm_end, dtype=np.int64) != sm))
    return BlockStats(
        ctas=n,
        sms_used=int(used.size),
        max_ctas_per_sm=int(counts.max()),
        ctas_at_once=at_once,
        waves=int(waves),
        span_ns=float(ends[-1]),
        tail_ns=float(ends[-1] - done_90),
        start_skew_p50_ns=_percentile(start, 50),
        start_skew_p99_ns=_percentile(start, 99),
        first_start_p50_ns=_percentile(first_used, 50),
        first_start_max_ns=float(first_used.max()),
        cta_p10_ns=_percentile(duration, 10),
        cta_p50_ns=_percentile(duration, 50),
        cta_p90_ns=_percentile(duration, 90),
        cta_p99_ns=_percentile(duration, 99),
        moved_ctas=moved,
    )


def timer_resolution_ns(starts: Array) -> float | None:
    """The smallest non-zero step between two sorted CTA start times of a run (None: no step)."""
    steps = np.diff(np.sort(np.asarray(starts, dtype=np.int64)))
    steps = steps[steps > 0]
    return float(steps.min()) if steps.size else None
