"""Findings about what a side's timing ran beside (``FusionRecord.conditions``, issue #27): other
work of its process on the GPU, other processes on the GPU, a GPU held back by its power or
thermal limits, and clocks held by a setting.

Other work, other processes and a clock setting are root causes of the setup: the two sides'
numbers were not taken under like conditions. Throttling is a mechanism that follows from the
first two (they draw the power that throttles the GPU), as the clocks do: the causal model
(:mod:`fusiondiff.diff.causes`) says so, and the ledger counts a gap once. Other processes that
NVML never saw running kernels are reported, but are no evidence that they acted
(:func:`seen_at_work`).

The host's side (a host that keeps the GPU waiting) is :mod:`fusiondiff.diff.rules_host`.

Every finding's evidence is numbers with units (:class:`~fusiondiff.diff.records.Evidence`); the
sentences are in :mod:`fusiondiff.report.words.environment_words`. What a side did not record (no NVML,
another timer, a file older than the field) is ``None`` there, never a zero.
"""

from __future__ import annotations

import functools
import statistics
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from fusiondiff.diff.clocks import max_clock_mhz, running
from fusiondiff.diff.context import RuleContext, make_finding, median_or_none
from fusiondiff.diff.records import Evidence, Finding, FusionPair, Unit
from fusiondiff.records.conditions import DeviceActivity, OtherWork, TimingConditions
from fusiondiff.records.model import FusionRecord

OVERLAP_MIN = 0.05
"""Other work counts when it overlapped at least 5 % of a side's sample-window time, 5 points more
than on the other side (two quiet runs overlap 0 %)."""
THROTTLE_SHARE = 0.01
"""A limit held the clocks back for at least 1 % of the timing window."""
THROTTLE_BITS = {0x4: "power", 0x8: "hardware", 0x20: "thermal", 0x40: "thermal", 0x80: "power_brake"}
"""NVML clock event reasons that hold the clocks below what was asked: software power cap, hardware
slowdown, software and hardware thermal slowdown, hardware power brake."""
APPLICATIONS_CLOCKS = 0x2
"""NVML's reason for clocks held by the applications-clock setting (``nvidia-smi -ac``) or a lock."""
LIMITS = ("power", "thermal", "reliability", "board_limit")
"""Violation policies that mean the GPU held its clocks back (not low utilization, not a setting)."""

_UNRECORDED = TimingConditions()
"""The conditions of a record written before they were recorded: nothing known."""

_V = TypeVar("_V")


def _records(ctx: RuleContext, pair: FusionPair) -> tuple[FusionRecord, FusionRecord]:
    return ctx.fusion_a(pair), ctx.fusion_b(pair)


def _conditions(record: FusionRecord) -> TimingConditions:
    return record.conditions or _UNRECORDED


def _affected(
    ctx: RuleContext, value: Callable[[FusionRecord], _V], concerns: Callable[[_V, _V], bool]
) -> tuple[list[FusionPair], list[FusionPair]]:
    """The timed pairs (neither execution failed) where ``concerns(A's value, B's)``, and those
    where ``concerns(B's value, A's)``: the pairs a rule's finding about side A, and about side B,
    is given. One walk over the pairs serves both sides, each record's ``value`` read once."""
    affected: tuple[list[FusionPair], list[FusionPair]] = ([], [])
    for pair, (a, b) in zip(ctx.pairs, ctx.records):
        if pair.failed:
            continue
        va, vb = value(a), value(b)
        if concerns(va, vb):
            affected[0].append(pair)
        if concerns(vb, va):
            affected[1].append(pair)
    return affected


def _per_side(
    ctx: RuleContext, pairs: Sequence[FusionPair], value: Callable[[FusionRecord], float | None]
) -> tuple[list[float], list[float]]:
    """``value`` of A's and of B's records of ``pairs``, where known."""
    a = [v for p in pairs if (v := value(_records(ctx, p)[0])) is not None]
    b = [v for p in pairs if (v := value(_records(ctx, p)[1])) is not None]
    return a, b


def _evidence(
    ctx: RuleContext, pairs: Sequence[FusionPair], field: str, unit: Unit, value: Callable[[FusionRecord], float | None]
) -> Evidence:
    """Evidence of ``field``: the median of ``value`` over each side's records of ``pairs``."""
    a, b = _per_side(ctx, pairs, value)
    return Evidence(field, median_or_none(a), median_or_none(b), unit)


def _common(ctx: RuleContext, pairs: Sequence[FusionPair]) -> list[Evidence]:
    """What every environment finding shows beside its own numbers: the fusions' time (summed over
    ``pairs``) and the SM clock while they ran (the median over them of the reading taken while the
    middle sample ran, else of the readings that are not idle)."""
    limit = max_clock_mhz(ctx.a, ctx.b)

    def clock(record: FusionRecord) -> float | None:
        readings = record.sm_clock_mhz
        if len(readings) == 3 and running(readings[1:2], limit):
            return float(readings[1])  # read while the middle sample's kernels ran (since issue #23)
        return median_or_none(running(readings, limit))

    a = sum(p.timing.median_a_ns for p in pairs)
    b = sum(p.timing.median_b_ns for p in pairs)
    return [Evidence("fusion_median_ns", a, b, "ns"), _evidence(ctx, pairs, "sm_clock_mhz", "mhz", clock)]


def _finding(rule: str, pairs: Sequence[FusionPair], data: Sequence[Evidence], *, evidenced: bool = True) -> Finding:
    """A finding about ``pairs``; which side it concerns shows in its evidence (the wording reads
    it there: the side that overlapped, throttled or waited more)."""
    return make_finding(rule, data, [p.label for p in pairs], evidenced=evidenced)


# ---------------------------------------------------------------- other work of the process


def _other(record: FusionRecord) -> OtherWork | None:
    return _conditions(record).other_work


def _overlap(record: FusionRecord) -> float | None:
    """The mean fraction of the sample windows other work overlapped; ``None`` where not seen."""
    other = _other(record)
    return None if other is None else other.mean_fraction


def _overlapped_more(mine: float | None, theirs: float | None) -> bool:
    """Other work overlapped at least :data:`OVERLAP_MIN` of my windows, and that much more than theirs."""
    if mine is None or mine < OVERLAP_MIN:
        return False
    return theirs is None or mine - theirs >= OVERLAP_MIN


def other_work(ctx: RuleContext) -> Iterator[Finding]:
    """Other threads of a side's process ran kernels on the GPU during its sample windows."""
    for index, affected in enumerate(_affected(ctx, _overlap, _overlapped_more)):
        if affected:
            data = _other_work_evidence(ctx, affected, index) + _common(ctx, affected) + _block_delays(ctx, affected)
            yield _finding("other_work", affected, data)


def _other_work_evidence(ctx: RuleContext, pairs: Sequence[FusionPair], index: int) -> list[Evidence]:
    def windows(w: OtherWork | None) -> tuple[int, int]:
        return (0, 0) if w is None else (w.windows_overlapped, len(w.overlap_fractions))

    def share(records: list[FusionRecord]) -> float | None:
        counts = [windows(_other(r)) for r in records if _other(r) is not None]
        total = sum(n for _, n in counts)
        return sum(k for k, _ in counts) / total if total else None

    def fraction(records: list[FusionRecord]) -> float | None:
        found = [w.mean_fraction for r in records if (w := _other(r)) is not None]
        return statistics.fmean(found) if found else None

    def copies(records: list[FusionRecord]) -> float | None:
        found = [w.copies for r in records if (w := _other(r)) is not None]
        return float(sum(found)) if found else None

    sides = [[_records(ctx, p)[i] for p in pairs] for i in (0, 1)]
    data = [
        Evidence("windows_overlapped", share(sides[0]), share(sides[1]), "fraction"),
        Evidence("window_overlap", fraction(sides[0]), fraction(sides[1]), "fraction"),
    ]
    # the kernels that overlapped longest on the side the finding is about, with the other side's figure
    totals: list[dict[tuple[str, int | None], list[float]]] = [{}, {}]
    for i in (0, 1):
        for record in sides[i]:
            for k in w.kernels if (w := _other(record)) is not None else ():
                entry = totals[i].setdefault((k.name, k.stream), [0.0, 0.0])
                entry[0] += k.overlap_ns
                entry[1] += k.calls
    ranked = sorted(totals[index].items(), key=lambda kv: (-kv[1][0], kv[0][0]))[:3]
    for (name, stream), (overlap, calls) in ranked:
        other = totals[1 - index].get((name, stream), [0.0, 0.0])
        pairs_ = [(overlap, calls), (other[0], other[1])]
        a, b = pairs_[0] if index == 0 else pairs_[1], pairs_[1] if index == 0 else pairs_[0]
        data += [
            Evidence("other_kernel_overlap_ns", a[0], b[0], "ns", subject=name),
            Evidence("other_kernel_calls", a[1], b[1], "count", subject=name),
            Evidence("other_kernel_stream", _id(stream), _id(stream), "id", subject=name),
        ]
    data.append(Evidence("other_copies", copies(sides[0]), copies(sides[1]), "count"))
    return data


def _id(value: int | None) -> float | None:
    return None if value is None else float(value)


def _block_delays(ctx: RuleContext, pairs: Sequence[FusionPair]) -> list[Evidence]:
    """Where both sides have block-level timelines: the latest first CTA start of an SM and the
    fewest SMs used in a run, over the pairs' measured kernels (what other work did to the CTAs)."""
    found: dict[str, list[list[float]]] = {"first_start_max_ns_max": [[], []], "sms_used_min": [[], []]}
    for pair in pairs:
        for i, record in enumerate(_records(ctx, pair)):
            timeline = record.sm_timeline
            for kernel in () if timeline is None else timeline.measured:
                found["first_start_max_ns_max"][i].append(kernel.extremes("first_start_max_ns")[1])
                found["sms_used_min"][i].append(kernel.extremes("sms_used")[0])
    late, sms = found["first_start_max_ns_max"], found["sms_used_min"]
    if not (late[0] and late[1]):
        return []
    return [
        Evidence("first_start_max_ns_max", max(late[0]), max(late[1]), "ns"),
        Evidence("sms_used_min", min(sms[0]), min(sms[1]), "count"),
    ]


# ---------------------------------------------------------------- other processes


def _device(record: FusionRecord) -> DeviceActivity | None:
    return _conditions(record).device


def _process_count(record: FusionRecord) -> int | None:
    d = _device(record)
    return None if d is None else d.other_process_count


def _more_processes(mine: int | None, theirs: int | None) -> bool:
    """Other processes had a context on my GPU, more of them than on theirs (or theirs unknown)."""
    if mine is None or mine == 0:
        return False
    return theirs is None or theirs < mine


def seen_at_work(data: Sequence[Evidence]) -> bool:
    """An ``other_processes`` finding's evidence shows its processes at work: NVML saw one of them
    running kernels during the timing (per-process SM utilization above zero on the side that had
    more of them; NVML samples a process only while it runs kernels), or could not tell (no
    utilization recorded, or a process list without this process: another PID namespace). A context
    that only waits (a live process waiting for its replay: the zoo, 2026-12-03) is no evidence
    that it acted, so it takes no share of a gap (:mod:`fusiondiff.diff.ledger`)."""
    evidence = {e.field: e for e in data if e.subject is None}
    count, util = evidence.get("other_processes"), evidence.get("other_process_sm_util")
    if count is None or util is None:
        return True

    def number(value: object) -> float:
        return float(value) if isinstance(value, (int, float)) else 0.0

    side_a = number(count.a) > number(count.b)
    listed = evidence.get("own_process_listed")
    if listed is not None and number(listed.a if side_a else listed.b) == 0.0:
        return True  # NVML's list lacked this process (another PID namespace): it cannot tell who ran
    return number(util.a if side_a else util.b) > 0.0


def other_processes(ctx: RuleContext) -> Iterator[Finding]:
    """Other processes had a compute context on a side's GPU while it was timed (NVML)."""
    for affected in _affected(ctx, _process_count, _more_processes):
        if affected:
            data = [_evidence(ctx, affected, name, unit, value) for name, unit, value in _PROCESS_EVIDENCE]
            yield _finding("other_processes", affected, data + _common(ctx, affected), evidenced=seen_at_work(data))


def _process_util(record: FusionRecord) -> float | None:
    d = _device(record)
    found = [p.sm_util_max for p in d.other_processes if p.sm_util_max is not None] if d else []
    return max(found) if found else None


def _process_memory(record: FusionRecord) -> float | None:
    d = _device(record)
    found = [p.used_memory_bytes for p in d.other_processes if p.used_memory_bytes is not None] if d else []
    return float(max(found)) if found else None


def _device_number(field: str) -> Callable[[FusionRecord], float | None]:
    def value(record: FusionRecord) -> float | None:
        d = _device(record)
        return None if d is None else float(getattr(d, field))

    return value


def _gpu_util(record: FusionRecord) -> float | None:
    d = _device(record)
    return None if d is None else median_or_none(d.gpu_util_samples)


_PROCESS_EVIDENCE: tuple[tuple[str, Unit, Callable[[FusionRecord], float | None]], ...] = (
    ("other_processes", "count", _device_number("other_process_count")),
    ("own_process_listed", "count", _device_number("own_process_listed")),
    ("other_process_sm_util", "fraction", _process_util),
    ("other_process_memory_bytes", "bytes", _process_memory),
    ("gpu_util", "fraction", _gpu_util),
)
"""What an ``other_processes`` finding shows, per side (medians over its fusions)."""


# ---------------------------------------------------------------- throttling and clock settings


def _limit_fractions(d: DeviceActivity) -> dict[str, float]:
    """Per limit, the fraction of the timing window it held the clocks back."""
    if d.window_ns <= 0:
        return {}
    return {name: min(d.violation_ns[name] / d.window_ns, 1.0) for name in LIMITS if name in d.violation_ns}


def _throttled(record: FusionRecord) -> bool:
    d = _device(record)
    if d is None:
        return False
    reasons = d.reasons_while_running or 0
    return any(f >= THROTTLE_SHARE for f in _limit_fractions(d).values()) or any(reasons & b for b in THROTTLE_BITS)


def _only_mine(mine: bool, theirs: bool) -> bool:
    return mine and not theirs


def gpu_throttled(ctx: RuleContext) -> Iterator[Finding]:
    """A side's GPU held its clocks back on a power, thermal or hardware limit while it was timed."""
    for affected in _affected(ctx, _throttled, _only_mine):
        if not affected:
            continue
        data = []
        for name in LIMITS:
            ev = _evidence(ctx, affected, f"limit_{name}", "fraction", functools.partial(_limit, name=name))
            if (ev.on("A") or 0) > 0 or (ev.on("B") or 0) > 0:
                data.append(ev)
        data.append(_reasons_evidence(ctx, affected))
        yield _finding("gpu_throttled", affected, data + _common(ctx, affected))


def _limit(record: FusionRecord, name: str) -> float | None:
    d = _device(record)
    return None if d is None else _limit_fractions(d).get(name)


def _reasons_evidence(ctx: RuleContext, pairs: Sequence[FusionPair]) -> Evidence:
    """The reasons read while the middle samples ran, OR-ed over the pairs (a bit mask)."""
    masks: list[float | None] = []
    for i in (0, 1):
        found = [m for p in pairs if (d := _device(_records(ctx, p)[i])) and (m := d.reasons_while_running) is not None]
        value = 0
        for m in found:
            value |= m
        masks.append(float(value) if found else None)
    return Evidence("clock_event_reasons", masks[0], masks[1], "flags")


def _held(record: FusionRecord) -> bool | None:
    """Whether the record's clocks were held by a setting; ``None`` where NVML did not say."""
    d = _device(record)
    if d is None:
        return None
    reasons = d.reasons_while_running or 0
    set_apart = (
        d.applications_clock_mhz is not None
        and d.default_applications_clock_mhz is not None
        and d.applications_clock_mhz != d.default_applications_clock_mhz
    )
    return bool(reasons & APPLICATIONS_CLOCKS) or set_apart


def _held_only_mine(mine: bool | None, theirs: bool | None) -> bool:
    """My clocks were held, and theirs, known, were not."""
    return bool(mine) and theirs is not None and not theirs


def clocks_locked(ctx: RuleContext) -> Iterator[Finding]:
    """A side's clocks were held by the applications-clock setting or a locked clock."""
    for affected in _affected(ctx, _held, _held_only_mine):
        if affected:

            def clock(r: FusionRecord) -> float | None:
                d = _device(r)
                return None if d is None or d.applications_clock_mhz is None else float(d.applications_clock_mhz)

            data = [_evidence(ctx, affected, "applications_clock_mhz", "mhz", clock), _reasons_evidence(ctx, affected)]
            yield _finding("clocks_locked", affected, data + _common(ctx, affected))
