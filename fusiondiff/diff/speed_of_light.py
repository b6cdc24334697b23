"""Each kernel against the two GPUs' measured DRAM peaks: what another GPU predicts, and what it does not.

On another GPU a kernel's time changes for two kinds of reason. One is the GPU's: a memory-bound
kernel moves the same bytes at the other GPU's bandwidth, so B's time is predicted from A's and the
two measured peaks (``Environment.peak_bandwidth``, :mod:`fusiondiff.recording.peak`)::

    predicted_b = time_a * (bytes_b / bytes_a) * (peak_a / peak_b)

(the bytes are each side's own count, :mod:`fusiondiff.records.traffic`; for the same fusion they are
the same, and the prediction is ``time_a * peak_a / peak_b``). The other is nvFuser's: a kernel
whose heuristics suit one GPU less runs at a smaller share of that GPU's peak. The residual,
``time_b / predicted_b - 1``, is that share's change: ``percent_a / percent_b - 1``. Above 0, B
leaves more of its peak on the table than A; below, A does. It is a finding for nvFuser's
heuristics, and evidence of the ``gpu`` root cause (:func:`peak_evidence`): it never competes with it.

A residual counts only beyond its noise floor, the residual that a kernel exactly at the prediction
could show from what was measured:

- each median's distribution-free confidence interval at ``1 - ALPHA`` (99 %,
  :func:`fusiondiff.diff.stats.median_interval`), as a ratio to the median: together, how far
  ``time_b / time_a`` can be from the ratio of medians either way;
- each peak's own spread: the median copy (``gbs``) against the fastest (``best_gbs``), the GPU's
  true peak taken to lie between them, which moves ``peak_b / peak_a`` either way;
- the differ's noise floor for two medians (:data:`fusiondiff.diff.stats.RELATIVE_FLOOR` of the
  prediction, at least :data:`fusiondiff.diff.stats.ABSOLUTE_FLOOR_NS`), as for any verdict.

With ``lo`` and ``hi`` the bounds of ``(time_b / time_a) * (peak_b / peak_a)`` over those intervals,
relative to the point value, B counts as slower than predicted where ``residual > 1 / lo - 1``, and
as faster where ``residual < 1 / hi - 1``; each floor is at least the differ's. A kernel's floor is
the one in its residual's direction.

A fusion whose kernels cannot be told apart on a side (several kernels and no per-segment byte
counts), or whose kernels do not pair one to one, is judged as a whole: its kernels' times summed,
against the fusion's bytes, its samples' spread from the fusion's own samples.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from fusiondiff.diff.records import Evidence, FusionPair, KernelAgainstPeaks
from fusiondiff.diff.stats import ABSOLUTE_FLOOR_NS, RELATIVE_FLOOR, median_interval
from fusiondiff.records.environment import PeakBandwidth
from fusiondiff.records.model import Capture, FusionRecord
from fusiondiff.records.traffic import KernelTraffic, fusion_bytes, fusion_traffic, peak_missing

SHOWN = 5
"""Kernels beyond their floor named in the GPU's evidence, those furthest from the prediction
first (the rest counted; ``DiffResult.against_peaks`` holds every one)."""


def row_label(row: KernelAgainstPeaks) -> str:
    """``<pair label>/<kernel>``, or the pair's label for a fusion judged as a whole."""
    return row.fusion if row.kernel is None else f"{row.fusion}/{row.kernel}"


def against_peaks(a: Capture, b: Capture, pairs: Sequence[FusionPair]) -> tuple[KernelAgainstPeaks, ...]:
    """Every matched kernel (or whole fusion) of ``pairs`` against the two captures' measured
    peaks, in the pairs' order; empty where a capture measured none. A pair with a failed side, no
    kernel timed, or bytes that cannot be counted (an input of unknown dtype) has no row."""
    peak_a, peak_b = a.environment.peak_bandwidth, b.environment.peak_bandwidth
    if peak_a is None or peak_b is None:
        return ()
    rows: list[KernelAgainstPeaks] = []
    for pair in pairs:
        if pair.failed:
            continue
        fa, fb = a.fusions[pair.index_a], b.fusions[pair.index_b]
        ta, tb = fusion_traffic(fa, peak_a.gbs), fusion_traffic(fb, peak_b.gbs)
        if not ta or not tb:
            continue
        kernels = _kernel_rows(pair, fa, fb, ta, tb, peak_a, peak_b)
        if kernels is not None:
            rows += kernels
            continue
        whole_a, whole_b = _whole(fa, ta, peak_a.gbs), _whole(fb, tb, peak_b.gbs)
        if whole_a is not None and whole_b is not None:
            row = _row(pair.label, None, whole_a, whole_b, fa.timing.samples_ns, fb.timing.samples_ns, peak_a, peak_b)
            if row is not None:
                rows.append(row)
    return tuple(rows)


def _kernel_rows(
    pair: FusionPair,
    fa: FusionRecord,
    fb: FusionRecord,
    ta: Sequence[KernelTraffic],
    tb: Sequence[KernelTraffic],
    peak_a: PeakBandwidth,
    peak_b: PeakBandwidth,
) -> list[KernelAgainstPeaks] | None:
    """A row per matched kernel, where both sides' traffic is per kernel and every timed kernel
    pairs with one of the other side; ``None`` where the fusion is to be judged as a whole."""
    by_a = {t.kernel_order: t for t in ta}
    by_b = {t.kernel_order: t for t in tb}
    if (
        None in by_a
        or None in by_b
        or pair.unmatched_kernels
        or len(pair.kernels) != len(by_a)
        or len(by_a) != len(by_b)
    ):
        return None
    samples_a = {k.order: k.timing.samples_ns for k in fa.kernels}
    samples_b = {k.order: k.timing.samples_ns for k in fb.kernels}
    rows = []
    for k in pair.kernels:
        if k.order_a not in by_a or k.order_b not in by_b:
            return None
        row = _row(
            pair.label,
            k.normalized_name,
            by_a[k.order_a],
            by_b[k.order_b],
            samples_a[k.order_a],
            samples_b[k.order_b],
            peak_a,
            peak_b,
        )
        if row is not None:
            rows.append(row)
    return rows


def _whole(record: FusionRecord, traffic: Sequence[KernelTraffic], peak: float) -> KernelTraffic | None:
    """The fusion's traffic as a whole: as :func:`fusion_traffic` gave it where it is one entry,
    else the fusion's bytes over its kernels' summed times."""
    if len(traffic) == 1 and (traffic[0].kernel_order is None or len(record.kernels) == 1):
        return traffic[0]
    whole = fusion_bytes(record)
    if whole is None:
        return None
    time_ns = math.fsum(t.time_ns for t in traffic)
    note = "judged as a whole: its kernels do not pair one to one with the other side's"
    return KernelTraffic(record.key, None, "fusion", whole.total, time_ns, peak, (*whole.notes, note))


def _row(
    fusion: str,
    kernel: str | None,
    ta: KernelTraffic,
    tb: KernelTraffic,
    samples_a: Sequence[float],
    samples_b: Sequence[float],
    peak_a: PeakBandwidth,
    peak_b: PeakBandwidth,
) -> KernelAgainstPeaks | None:
    if not (ta.time_ns > 0 and tb.time_ns > 0 and ta.bytes > 0 and tb.bytes > 0 and samples_a and samples_b):
        return None
    predicted = ta.time_ns * (tb.bytes / ta.bytes) * (peak_a.gbs / peak_b.gbs)
    residual = tb.time_ns / predicted - 1
    slower, faster = _floors(samples_a, samples_b, peak_a, peak_b, predicted)
    floor = slower if residual >= 0 else faster
    if math.isinf(floor):  # samples of 0 ns: they allow any residual
        floor = math.nan
    return KernelAgainstPeaks(
        fusion=fusion,
        kernel=kernel,
        time_a_ns=ta.time_ns,
        time_b_ns=tb.time_ns,
        bytes_a=ta.bytes,
        bytes_b=tb.bytes,
        peak_a_gbs=peak_a.gbs,
        peak_b_gbs=peak_b.gbs,
        predicted_b_ns=predicted,
        residual=residual,
        floor=floor,
        beyond_floor=residual > slower or residual < -faster,
        percent_a=100 * ta.achieved_gbs / peak_a.gbs,
        percent_b=100 * tb.achieved_gbs / peak_b.gbs,
        notes=tuple(dict.fromkeys((*ta.notes, *tb.notes))),
    )


def _floors(
    samples_a: Sequence[float],
    samples_b: Sequence[float],
    peak_a: PeakBandwidth,
    peak_b: PeakBandwidth,
    predicted: float,
) -> tuple[float, float]:
    """The residual's noise floors (B slower than predicted, B faster), as the module says."""
    lo_a, hi_a = median_interval(samples_a)
    lo_b, hi_b = median_interval(samples_b)
    med_a, med_b = statistics.median(samples_a), statistics.median(samples_b)
    if not (med_a > 0 and med_b > 0):  # half the samples or more at 0 ns: no residual can be told
        return math.inf, math.inf
    # (time_b / time_a) * (peak_b / peak_a) at its lowest and highest, over its point value
    low = (lo_b / med_b) * (med_a / hi_a) * (peak_a.gbs / peak_a.best_gbs)
    high = (hi_b / med_b) * (med_a / lo_a if lo_a > 0 else math.inf) * (peak_b.best_gbs / peak_b.gbs)
    differ = max(RELATIVE_FLOOR, ABSOLUTE_FLOOR_NS / predicted)
    slower = 1 / low - 1 if low > 0 else math.inf
    faster = 1 - 1 / high
    return max(slower, differ), max(faster, differ)


def peak_evidence(a: Capture, b: Capture, rows: Sequence[KernelAgainstPeaks]) -> list[Evidence]:
    """The GPU's evidence from the two peaks: where a capture measured none, that alone
    (``peak_missing``: why, on each side; no prediction is made); else both peaks (median and
    best copy), how many kernels were judged and how many are beyond their floor, and the first
    :data:`SHOWN` of those (``percent_of_peak``, ``kernel_time_ns`` and ``peak_noise_floor``, the
    kernel as ``subject``)."""
    missing = (peak_missing(a), peak_missing(b))
    peak_a, peak_b = a.environment.peak_bandwidth, b.environment.peak_bandwidth
    if peak_a is None or peak_b is None:
        return [Evidence("peak_missing", missing[0], missing[1], "text")]
    named = sorted((r for r in rows if r.beyond_floor), key=lambda r: -abs(r.time_b_ns - r.predicted_b_ns))
    data = [
        Evidence("peak_gbs", peak_a.gbs, peak_b.gbs, "value"),
        Evidence("peak_best_gbs", peak_a.best_gbs, peak_b.best_gbs, "value"),
        Evidence("kernels_against_peaks", len(rows), len(rows), "count"),
        Evidence("kernels_off_peaks", len(named), len(named), "count"),
    ]
    for row in named[:SHOWN]:
        subject = row_label(row)
        data += [
            Evidence("percent_of_peak", row.percent_a / 100, row.percent_b / 100, "fraction", subject=subject),
            Evidence("kernel_time_ns", row.time_a_ns, row.time_b_ns, "ns", subject=subject),
            Evidence("peak_noise_floor", row.floor, row.floor, "fraction", subject=subject),
        ]
    return data


PEAK_FIELDS = frozenset(
    ("peak_missing", "peak_gbs", "peak_best_gbs", "kernels_against_peaks", "kernels_off_peaks")
    + ("percent_of_peak", "kernel_time_ns", "peak_noise_floor")
)
"""The fields :func:`peak_evidence` gives the GPU's finding."""
