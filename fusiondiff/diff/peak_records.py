"""The record of one kernel timed against the two GPUs' measured DRAM peaks (a diff's
``against_peaks``), apart from :mod:`fusiondiff.diff.records`, which reads it from here."""

from __future__ import annotations

from dataclasses import dataclass

from fusiondiff.records.constraints import NaNFloat


@dataclass(frozen=True)
class KernelAgainstPeaks:
    """One matched kernel (or, where a fusion's kernels cannot be told apart, the whole fusion)
    timed against the two GPUs' measured DRAM peaks: what B's time would be if the kernel were
    memory-bound, and how far B's time is from that (:mod:`fusiondiff.diff.speed_of_light`)."""

    fusion: str
    """The pair's label."""
    kernel: str | None
    """The kernel's normalized name; ``None``: the fusion as a whole (its kernels' times summed)."""
    time_a_ns: float
    """Median device time on A."""
    time_b_ns: float
    bytes_a: int
    """The bytes it must move, as each side's record counts them (:mod:`fusiondiff.records.traffic`)."""
    bytes_b: int
    peak_a_gbs: float
    """A's measured peak (``Environment.peak_bandwidth.gbs``), GB/s."""
    peak_b_gbs: float
    predicted_b_ns: float
    """``time_a_ns * (bytes_b / bytes_a) * (peak_a_gbs / peak_b_gbs)``: B's time if the kernel runs
    at the same share of its GPU's peak as on A (the same fusion: the bytes are the same)."""
    residual: float
    """``time_b_ns / predicted_b_ns - 1``: above 0, B runs further from its peak than A from A's."""
    floor: NaNFloat
    """The residual the timing distributions and the peaks' spread allow in its direction, as a
    fraction; :attr:`beyond_floor` where ``abs(residual)`` is more. NaN where they allow any (a
    sample of 0 ns)."""
    beyond_floor: bool
    percent_a: float
    """Achieved bandwidth over A's peak, in percent (``bytes_a / time_a_ns / peak_a_gbs``)."""
    percent_b: float
    notes: tuple[str, ...] = ()
    """What the byte counts approximate, in words (:class:`fusiondiff.records.traffic.KernelTraffic`)."""
