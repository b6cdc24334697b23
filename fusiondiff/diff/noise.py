"""Kernel-time verdicts judged between processes: is B faster, slower or the same as A?

A fusion's samples in one process say how precisely that process's median is known (a few
tenths of a per cent); whether two processes differ is decided by how far the median moves
between fresh processes of one program (memory placement, alignment, clocks, the allocator): 0.1
to 1.25 % on the H200, up to 4.6 % between two processes of one 20 us fusion. Thirty samples of one
process weigh about as much as one process, so the process is the unit: each side is reduced to
its median (the median of its processes' medians where it has several), and the gap
``g = ln(median B / median A)`` is judged against

    floor = sqrt(q_A^2 * (s_A^2 + e_A^2) / n_A + q_B^2 * (s_B^2 + e_B^2) / n_B),  at least ABSOLUTE_FLOOR_NS

where ``n`` is a side's processes of the fusion, ``s`` its between-process spread (standard
deviation of the log median), ``e`` the standard error of its median inside the process (from the
IQR) and ``q`` a quantile at ``1 - ALPHA / (2 m)`` for ``m`` fusions judged at once (Bonferroni:
the family of fusions of one diff keeps a false alarm at ``ALPHA``). A side timed in at least
:data:`MEASURED_PROCESSES` processes (``replay --processes``, ``diff --also-a/--also-b``) has
its ``s`` measured from their log medians (``e`` is then inside it) and Student's ``t`` for its
``n - 1`` degrees of freedom as ``q``; any other side reads ``s`` from the calibration of its GPU
and the fusion's size (``fusiondiff/data/process_spread.json``, written by
``benchmarks/calibrate_spread.py``) with the normal quantile. The verdict says which.

- ``FASTER`` / ``SLOWER``: ``|g|`` beyond the floor;
- ``SAME``: within it, "SAME within +-floor": the floor is the smallest gap these data could show;
- ``NOT MEASURED``: a side has no samples, a median of 0 ns (the profiler recorded no kernel), or
  fewer than :data:`FEW_SAMPLES` samples in a process (too few to know its median).

Both sides enter the floor alike and the gap is a log ratio, so ``diff A B`` and ``diff B A`` give
mirrored verdicts. Nothing here imports scipy.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from statistics import NormalDist
from typing import NamedTuple

import numpy as np

from fusiondiff.diff.records import Spread, TimingVerdict, Verdict
from fusiondiff.diff.stats import NOISY_IQR_FRACTION, SampleArrays
from fusiondiff.records.model import Timing
from fusiondiff.records.units import duration

ALPHA = 0.01
"""The chance of one false FASTER or SLOWER among all fusions of one diff of two like processes."""
ABSOLUTE_FLOOR_NS = 300.0
"""No gap under this is a difference: the calibration's smallest fusion runs 6.5 us, and below a
few us what moves a kernel between processes (launch, clocks, the timer's 32 ns steps) is unmeasured."""
MEDIAN_ERROR_PER_IQR = math.sqrt(math.pi / 2) / 1.349
"""The standard error of a median is ``sqrt(pi / 2) * sigma / sqrt(n)``, and ``sigma`` is the IQR over 1.349."""
FEW_SAMPLES = 3
"""Below this many samples a process's median is not known: one sample may be an outlier (a first
sample 18 % above its process's median is recorded on the H200), and two disagree with no third."""
MEASURED_PROCESSES = 3
"""A side's between-process spread is measured from at least this many processes of the fusion;
with fewer its calibrated spread stands in (two processes give one degree of freedom, whose
Student quantile at the family's error rate is in the hundreds)."""
TABLE = "data/process_spread.json"
"""The calibration, in the package."""


@dataclass(frozen=True)
class Calibration:
    """One entry of the calibration: a GPU kind's spread for fusions of a duration range."""

    gpu: str
    from_ns: float
    to_ns: float
    spread: float
    """Between-process standard deviation of the natural log of a fusion's median."""

    @property
    def name(self) -> str:
        """``H200 10-50 us``: how a verdict names the entry it used."""
        low = f"{self.from_ns / 1000:g}"
        return f"{self.gpu} {low}-{self.to_ns / 1000:g} us" if math.isfinite(self.to_ns) else f"{self.gpu} {low}+ us"


@functools.cache
def calibration() -> tuple[Calibration, ...]:
    """The recorded calibration, read once from the package."""
    text = resources.files("fusiondiff").joinpath(TABLE).read_text()
    return tuple(
        Calibration(e["gpu"], float(e["from_ns"]), math.inf if e["to_ns"] is None else float(e["to_ns"]), e["spread"])
        for e in json.loads(text)["entries"]
    )


@functools.cache
def calibrated_spread(gpu_name: str | None, median_ns: float) -> tuple[float, str]:
    """The between-process spread for a fusion of ``median_ns`` on ``gpu_name``, and which entry
    gave it. A GPU without its own entry gets the largest spread any GPU showed at that size
    (named ``H200 10-50 us, the largest at this size: none for NVIDIA H100 80GB HBM3``)."""
    sized = [c for c in calibration() if c.from_ns <= median_ns < c.to_ns] or [
        max(calibration(), key=lambda c: c.to_ns)
    ]
    own = [c for c in sized if gpu_name and c.gpu in gpu_name]
    if own:
        return own[0].spread, own[0].name
    largest = max(sized, key=lambda c: c.spread)
    return largest.spread, f"{largest.name}, the largest at this size: none for {gpu_name or 'an unnamed GPU'}"


def family_quantile(judged: int) -> float:
    """The two-sided normal quantile that keeps ``judged`` verdicts' family-wise error at :data:`ALPHA`."""
    return NormalDist().inv_cdf(1 - ALPHA / (2 * max(judged, 1)))


def student_quantile(p: float, df: int) -> float:
    """Student's t quantile at ``p`` (above 0.5) with ``df`` degrees of freedom: the two-sided
    coverage of integer degrees of freedom in closed form (Abramowitz and Stegun 26.7.3 and
    26.7.4), solved by bisection; past :data:`_SERIES_DF` the Cornish-Fisher expansion around the
    normal quantile, which is exact to 1e-4 there."""
    if df > _SERIES_DF:
        z = NormalDist().inv_cdf(p)
        terms = ((z**3 + z) / 4, (5 * z**5 + 16 * z**3 + 3 * z) / 96, (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384)
        return z + sum(term / df ** (k + 1) for k, term in enumerate(terms))
    target = 2 * p - 1
    low, high = 0.0, 1.0
    while _coverage(high, df) < target:
        low, high = high, 2 * high
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if _coverage(middle, df) < target else (low, middle)
    return (low + high) / 2


_SERIES_DF = 200
"""Above this many degrees of freedom :func:`student_quantile` expands around the normal quantile."""


def _coverage(t: float, df: int) -> float:
    """``P(|T| <= t)`` for Student's T with ``df`` (a positive integer) degrees of freedom."""
    theta = math.atan(t / math.sqrt(df))
    c2, s = math.cos(theta) ** 2, math.sin(theta)
    if df % 2 == 0:
        term = total = 1.0
        for k in range(1, df // 2):
            term *= (2 * k - 1) / (2 * k) * c2
            total += term
        return s * total
    if df == 1:
        return 2 * theta / math.pi
    term = total = math.cos(theta)
    for k in range(1, (df - 1) // 2):
        term *= (2 * k) / (2 * k + 1) * c2
        total += term
    return 2 / math.pi * (theta + s * total)


class _Side(NamedTuple):
    """One side of one pair, reduced to what the verdict reads (a named tuple: a diff of thousands
    of fusions makes two per verdict, and a tuple is made in C)."""

    samples: int
    """Samples, over all its processes."""
    median: float
    """The median of its processes' medians (NaN without samples)."""
    iqr: float
    processes: int
    """Its processes that were measured (at least :data:`FEW_SAMPLES` samples, a median above 0 ns)."""
    logs: tuple[float, ...] = ()
    """Each measured process's log median (empty where :func:`compare_timings` judges as arrays)."""
    error: float = math.nan
    """The standard error of a process's log median inside its process (NaN without a process)."""


def compare_processes(
    pairs: Sequence[tuple[Sequence[Timing], Sequence[Timing]]],
    gpus: tuple[str | None, str | None] = (None, None),
    judged: int | None = None,
) -> list[TimingVerdict]:
    """Verdicts of B against A for many pairs, each side given as its processes' timings of the
    fusion (one :class:`Timing` per process). ``gpus`` names each side's GPU for the calibration;
    ``judged`` is how many verdicts share the family-wise error (default: the measured pairs)."""
    flat = SampleArrays([t for a, b in pairs for t in (*a, *b)])
    medians, iqrs, counts = flat.medians.tolist(), flat.iqrs.tolist(), flat.counts.tolist()
    sides: list[tuple[_Side, _Side]] = []
    at = 0
    for a, b in pairs:
        found = []
        for processes in (a, b):
            found.append(
                _side(
                    medians[at : at + len(processes)], iqrs[at : at + len(processes)], counts[at : at + len(processes)]
                )
            )
            at += len(processes)
        sides.append((found[0], found[1]))
    if judged is None:
        judged = sum(1 for sa, sb in sides if _measured(sa) and _measured(sb))
    z = family_quantile(judged)
    verdicts = []
    for sa, sb in sides:
        if _measured(sa) and _measured(sb):
            floor, spread, spread_of = _floor(sa, sb, gpus, z, judged)
            floor = max(floor, ABSOLUTE_FLOOR_NS / (math.sqrt(sa.median) * math.sqrt(sb.median)))
        else:
            floor, spread, spread_of = math.nan, "", ""
        verdicts.append(_judged(sa, sb, floor, spread, spread_of))
    return verdicts


def compare_timings(
    pairs: Sequence[tuple[Timing, Timing]],
    gpus: tuple[str | None, str | None] = (None, None),
    judged: int | None = None,
    *,
    family: Sequence[bool] | None = None,
) -> list[TimingVerdict]:
    """:func:`compare_processes` for one process a side (a capture against a capture), its floors
    computed as arrays: a diff of thousands of fusions judges tens of thousands of pairs.
    ``judged`` is how many pairs are judged at once (the family whose false alarms the floor
    bounds); without it, those of ``family`` (a flag per pair, all by default) both sides measured."""
    a, b = SampleArrays([x for x, _ in pairs]), SampleArrays([y for _, y in pairs])
    ok = (a.counts >= FEW_SAMPLES) & (a.medians > 0) & (b.counts >= FEW_SAMPLES) & (b.medians > 0)
    if judged is None:
        judged = int(np.count_nonzero(ok if family is None else ok & np.asarray(family, dtype=bool)))
    z = family_quantile(judged)
    (spread_a, at_a, names_a), (spread_b, at_b, names_b) = (
        _calibrated(gpus[0], a.medians),
        _calibrated(gpus[1], b.medians),
    )
    with np.errstate(all="ignore"):  # the pairs not measured get NaN here, and are never read
        error_a = MEDIAN_ERROR_PER_IQR * a.iqrs / a.medians / np.sqrt(a.counts)
        error_b = MEDIAN_ERROR_PER_IQR * b.iqrs / b.medians / np.sqrt(b.counts)
        floors = z * np.sqrt(spread_a**2 + spread_b**2 + error_a**2 + error_b**2)
        floors = np.maximum(floors, ABSOLUTE_FLOOR_NS / (np.sqrt(a.medians) * np.sqrt(b.medians)))
    names = {
        (i, j): " and ".join(dict.fromkeys((names_a[i], names_b[j])))
        for i in range(len(names_a))
        for j in range(len(names_b))
    }
    columns = zip(
        a.medians.tolist(), b.medians.tolist(), a.iqrs.tolist(), b.iqrs.tolist(), a.counts.tolist(), b.counts.tolist(),
        floors.tolist(), at_a.tolist(), at_b.tolist(),
    )  # fmt: skip
    return [
        _judged_measured(ma, mb, qa, qb, ca, cb, floor, names[(ia, ib)])
        if ca >= FEW_SAMPLES and ma > 0 and cb >= FEW_SAMPLES and mb > 0  # both measured: nearly every pair
        else _judged(_Side(ca, ma, qa, int(ca >= FEW_SAMPLES and ma > 0)),
                     _Side(cb, mb, qb, int(cb >= FEW_SAMPLES and mb > 0)),
                     floor, "calibration", names[(ia, ib)])
        for ma, mb, qa, qb, ca, cb, floor, ia, ib in columns
    ]  # fmt: skip


def _calibrated(gpu: str | None, medians: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Each median's calibrated spread, its entry's position and the entries' names."""
    starts, spreads, names = _entries_for(gpu)
    at = np.clip(np.searchsorted(starts, np.nan_to_num(medians), side="right") - 1, 0, len(starts) - 1)
    return spreads[at], at, names


@functools.cache
def _entries_for(gpu: str | None) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The calibration's duration ranges as :func:`calibrated_spread` reads them for ``gpu``:
    their starts, spreads and names."""
    starts = sorted({c.from_ns for c in calibration()})
    found = [calibrated_spread(gpu, start) for start in starts]
    return np.array(starts), np.array([f[0] for f in found]), [f[1] for f in found]


def _side(medians: Sequence[float], iqrs: Sequence[float], counts: Sequence[int]) -> _Side:
    """A side's processes reduced: their medians' median, logs and in-process error."""
    timed = [(m, q, n) for m, q, n in zip(medians, iqrs, counts) if n >= FEW_SAMPLES and m > 0]
    if not timed:
        known = [m for m, n in zip(medians, counts) if n]
        return _Side(sum(counts), max(known) if known else math.nan, 0.0, 0)
    ordered = sorted(m for m, _, _ in timed)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    errors = [MEDIAN_ERROR_PER_IQR * q / m / math.sqrt(n) for m, q, n in timed]
    error = math.sqrt(sum(e * e for e in errors) / len(errors))
    iqr = sorted(q for _, q, _ in timed)[len(timed) // 2]
    return _Side(sum(counts), median, iqr, len(timed), tuple(math.log(m) for m, _, _ in timed), error)


def measured(timing: Timing) -> bool:
    """A process's timing can be judged: at least :data:`FEW_SAMPLES` samples, a median above 0 ns."""
    return timing.count >= FEW_SAMPLES and timing.median_ns > 0


def _measured(side: _Side) -> bool:
    return side.processes > 0


def _floor(a: _Side, b: _Side, gpus: tuple[str | None, str | None], z: float, judged: int) -> tuple[float, Spread, str]:
    """The floor of ``|ln(B / A)|``, where its spread came from, and which. Each side brings its
    own term, as Welch's test does: a side of at least :data:`MEASURED_PROCESSES` processes its
    measured spread with Student's quantile for its degrees of freedom, any other side the
    calibrated spread (with its medians' error inside the process) and the normal quantile; each
    over its count of processes. One side's processes say nothing of the other side's: a live
    process is not assumed to move as its replays do."""
    measured_terms, calibrated_terms, names = [], [], []
    calibrated: list[str] = []  # the calibration entries used, for a floor of calibrated sides only
    for label, side, gpu in zip("AB", (a, b), gpus):
        n = len(side.logs)
        if n >= MEASURED_PROCESSES:
            mean = sum(side.logs) / n
            spread = math.sqrt(sum((x - mean) ** 2 for x in side.logs) / (n - 1))
            q = student_quantile(1 - ALPHA / (2 * max(judged, 1)), n - 1)
            measured_terms.append((q * spread) ** 2 / n)
            names.append(f"measured in {n} processes of {label}")
        else:
            spread, name = calibrated_spread(gpu, side.median)
            calibrated_terms.append((spread**2 + side.error**2) / n)
            calibrated.append(name)
            names.append(f"calibrated for {label}: {name}")
    if not measured_terms:  # z * sqrt(...): the array path of compare_timings computes it so, to the bit
        return z * math.sqrt(sum(calibrated_terms)), "calibration", " and ".join(dict.fromkeys(calibrated))
    return math.sqrt(sum(measured_terms) + z**2 * sum(calibrated_terms)), "measured", "; ".join(names)


def _judged(a: _Side, b: _Side, floor: float, spread: Spread, spread_of: str) -> TimingVerdict:
    """The verdict of two reduced sides, given the floor of their gap."""
    ratio = b.median / a.median if a.median > 0 and not math.isnan(b.median) else math.nan
    warnings = _warnings("A", a) + _warnings("B", b) if _noisy(a) or _noisy(b) else ()
    if not (_measured(a) and _measured(b)):
        verdict: Verdict = "NOT MEASURED"
        reason = _not_measured(*(("A", a) if not _measured(a) else ("B", b)))
        floor, spread, spread_of = math.nan, "", ""
    else:
        where = f"between-process spread {spread_of}" if spread == "measured" else f"calibrated spread: {spread_of}"
        verdict, reason = _against_floor(a.median, b.median, floor, where)
    return TimingVerdict(
        median_a_ns=a.median,
        median_b_ns=b.median,
        iqr_a_ns=a.iqr,
        iqr_b_ns=b.iqr,
        count_a=a.samples,
        count_b=b.samples,
        ratio=ratio,
        p_value=None,
        verdict=verdict,
        reason=reason,
        warnings=warnings,
        floor=floor,
        spread=spread,
        spread_of=spread_of,
        processes_a=max(a.processes, 1),
        processes_b=max(b.processes, 1),
    )


def _judged_measured(
    ma: float, mb: float, qa: float, qb: float, ca: int, cb: int, floor: float, spread_of: str
) -> TimingVerdict:
    """:func:`_judged` of two sides of one process each, both measured, against a calibrated
    floor: the same verdict, from the numbers as :func:`compare_timings` has them (its tens of
    thousands of pairs, without two reduced sides and their checks made for each)."""
    noisy_a, noisy_b = qa > NOISY_IQR_FRACTION * ma, qb > NOISY_IQR_FRACTION * mb
    warnings: tuple[str, ...] = ()
    if noisy_a or noisy_b:
        warnings = _warnings("A", _Side(ca, ma, qa, 1)) + _warnings("B", _Side(cb, mb, qb, 1))
    verdict, reason = _against_floor(ma, mb, floor, f"calibrated spread: {spread_of}")
    return TimingVerdict(
        median_a_ns=ma,
        median_b_ns=mb,
        iqr_a_ns=qa,
        iqr_b_ns=qb,
        count_a=ca,
        count_b=cb,
        ratio=mb / ma,
        p_value=None,
        verdict=verdict,
        reason=reason,
        warnings=warnings,
        floor=floor,
        spread="calibration",
        spread_of=spread_of,
        processes_a=1,
        processes_b=1,
    )


def _against_floor(ma: float, mb: float, floor: float, where: str) -> tuple[Verdict, str]:
    """The verdict of two measured medians whose gap's floor is ``floor``, and its reason, which
    says where the floor's spread came from (``where``)."""
    gap = _log_ratio(mb, ma)
    verdict: Verdict = "SAME" if abs(gap) <= floor else ("SLOWER" if gap > 0 else "FASTER")
    shown = f"median gap {duration(mb - ma, signed=True)} ({100 * gap:+.1f} %)"
    word = "within" if verdict == "SAME" else "beyond"
    return verdict, f"{shown} is {word} +-{100 * floor:.1f} %, the smallest gap these data can show ({where})"


def _log_ratio(high: float, low: float) -> float:
    """``ln(high / low)`` of two positive numbers, also where their quotient leaves the floats (a
    median of a few subnormal nanoseconds against one of microseconds)."""
    quotient = high / low
    return math.log(quotient) if 0 < quotient < math.inf else math.log(high) - math.log(low)


def _not_measured(side: str, s: _Side) -> str:
    """Why a side that was not measured cannot be judged, in one line."""
    if s.samples == 0:
        return f"no samples on side {side}"
    if math.isnan(s.median):
        return f"side {side}'s samples are not numbers (NaN): nothing was timed"
    if s.median <= 0:
        return f"side {side}'s median sample is 0 ns: its kernels were not timed"
    return f"only {s.samples} sample(s) on side {side}: too few to know its median (at least {FEW_SAMPLES})"


def _noisy(side: _Side) -> bool:
    """A measured side whose IQR is a large part of its median."""
    return side.processes > 0 and side.iqr > NOISY_IQR_FRACTION * side.median


def _warnings(name: str, side: _Side) -> tuple[str, ...]:
    """What weakens a side's median: a wide spread inside its process."""
    found = []
    if _noisy(side):
        found.append(f"side {name} is noisy: IQR is {100 * side.iqr / side.median:.0f} % of the median")
    return tuple(found)
