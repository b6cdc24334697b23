"""The host's side of a fusion's time: a side whose calls take longer on the host than their
kernels on the GPU, so that the GPU waits for the next launch, longer than on the other side; and a
side whose calls wait for their own kernels.

``host_bound`` belongs to the host question (:mod:`fusiondiff.diff.causes`): a circumstance of the
side it is found on, reported with what the GPU waits per call and per step, never counted in a
kernel gap nor blamed on the other side. The host question's own gap is ``fd.execute`` against
``fd.execute`` (``FusionPair.host``), measured alike on both sides.

Host times spread wide within a process and between processes (:mod:`fusiondiff.diff.host_stats`).
A side is host-bound in a fusion only where all of these hold:

- it has enough host samples (:data:`~fusiondiff.diff.host_stats.HOST_MIN_SAMPLES` of its calls, or
  of the protocol's ``fd.execute`` calls); else the question is not judged there;
- within its own process, the statistics that judge kernel time (:mod:`fusiondiff.diff.stats`)
  confirm that its calls' host time exceeds its kernels' time;
- the difference to the other side is beyond what two processes of one program differ by: its
  host time per call is :data:`~fusiondiff.diff.host_stats.HOST_FLOOR_RATIO` times the other's or
  more, confirmed by the samples, or its kernels are confirmed faster.

A call whose host time is its kernels' time while its warm-ups (launched back to back, nothing
waited for) take much less returned only when its kernels ended: that call waits for the GPU, the
GPU does not wait for it. It is named as such (``waits_for_kernels``, listed, not gated), and
never counted host-bound.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from fusiondiff.diff.context import RuleContext, make_finding, median_or_none
from fusiondiff.diff.host_stats import HOST_FLOOR_RATIO, HOST_MIN_SAMPLES
from fusiondiff.diff.records import Evidence, Finding, FusionPair, Unit
from fusiondiff.diff.stats import compare_timings
from fusiondiff.records.conditions import HostTiming
from fusiondiff.records.model import FusionRecord, Timing

HOST_MARGIN_NS = 2000.0
"""Host-bound: the GPU waits at least 2 us more per call on one side ..."""
HOST_SHARE = 0.10
"""... and at least 10 % of the other side's host time per call more."""
SYNC_TOLERANCE = 0.10
"""A call waits for its kernels where its host time is within this fraction of its kernels' time ..."""
SYNC_WARMUP_SHARE = 0.5
"""... while its warm-ups' host time (``fd.execute`` back to back) is under this share of it."""


def _host_timing(record: FusionRecord) -> HostTiming | None:
    return record.conditions.host if record.conditions is not None else None


def _host(record: FusionRecord) -> float | None:
    host = _host_timing(record)
    return None if host is None else host.per_call_ns


def _host_samples(record: FusionRecord) -> Timing:
    host = _host_timing(record)
    return Timing(host.per_call_samples_ns if host is not None else ())


def _execute_samples(record: FusionRecord) -> Timing:
    host = _host_timing(record)
    return Timing(host.execute_ns if host is not None else ())


def call_waits_for_kernels(record: FusionRecord, kernel_ns: float) -> bool:
    """The session's calls of ``record`` take its kernels' time on the host (within
    :data:`SYNC_TOLERANCE`) while its warm-ups take under :data:`SYNC_WARMUP_SHARE` of it: each
    call returned only when its kernels had ended."""
    host = _host_timing(record)
    if host is None or host.kind not in ("thunder_call", "session_execute") or not kernel_ns > 0:
        return False
    session = median_or_none(host.session_execute_ns or host.session_call_ns)
    warmups = median_or_none(host.execute_ns)
    return (
        session is not None
        and warmups is not None
        and abs(session - kernel_ns) <= SYNC_TOLERANCE * kernel_ns
        and warmups < SYNC_WARMUP_SHARE * kernel_ns
    )


def gpu_wait_ns(record: FusionRecord, host_ns: float, kernel_ns: float) -> float:
    """What the GPU waits for the host per call (host time beyond the kernels'): none where the
    call waits for its kernels (:func:`call_waits_for_kernels`)."""
    return 0.0 if call_waits_for_kernels(record, kernel_ns) else max(host_ns - kernel_ns, 0.0)


def steps_recorded(records: Sequence[FusionRecord]) -> int:
    """How many steps a capture's records span: the call count most of its fusion records share
    (a decode of 30 steps calls each of its fusions 30 times; ties: the fewer), so that a figure
    summed over every call of a capture can be said per step. 1 for a replay, or no records."""
    counts = Counter(r.call_count for r in records)
    return max(counts, key=lambda n: (counts[n], -n)) if counts else 1


def _judging(timings: Sequence[Timing]) -> bool:
    return all(len(t.samples_ns) >= HOST_MIN_SAMPLES for t in timings)


def _bound_samples(record: FusionRecord) -> Timing | None:
    """The host samples that judge whether a side's calls exceed its kernels: the calls', where
    there are enough, else the protocol's ``fd.execute`` (a lower bound of a session's call, which
    runs it); ``None`` with too few of either."""
    for samples in (_host_samples(record), _execute_samples(record)):
        if _judging([samples]):
            return samples
    return None


def _between_sides(ra: FusionRecord, rb: FusionRecord) -> tuple[Timing, Timing] | None:
    """The host samples that compare the two sides: the calls' where both have enough, else
    ``fd.execute``'s (alike on both sides); ``None`` with too few of either."""
    for pick in (_host_samples, _execute_samples):
        samples = (pick(ra), pick(rb))
        if _judging(samples):
            return samples
    return None


@dataclass(frozen=True)
class _Candidate:
    """A side that may be host-bound in a pair: index 0 for A, 1 for B."""

    index: int
    pair: FusionPair
    own: tuple[Timing, Timing]
    """(kernels, host samples) of this side."""
    hosts: tuple[Timing, Timing]
    """(the other side's host samples, this side's), of one kind (:func:`_between_sides`)."""


def host_bound(ctx: RuleContext) -> Iterator[Finding]:
    """A side's calls take longer on the host than their kernels on the GPU (confirmed within its
    process), and the GPU waits longer for them than on the other side (beyond what two processes
    of one program differ by)."""
    candidates: list[_Candidate] = []
    for pair, (ra, rb) in zip(ctx.pairs, ctx.records):  # both sides in one walk
        ha, hb = _host(ra), _host(rb)
        if pair.failed or ha is None or hb is None:
            continue
        between = _between_sides(ra, rb)
        if between is None:
            continue
        wa = gpu_wait_ns(ra, ha, pair.timing.median_a_ns)
        wb = gpu_wait_ns(rb, hb, pair.timing.median_b_ns)
        for index, (record, mine, theirs, their_host) in enumerate(((ra, wa, wb, hb), (rb, wb, wa, ha))):
            own = _bound_samples(record)
            if own is None or not (mine > 0 and mine - theirs >= max(HOST_MARGIN_NS, HOST_SHARE * their_host)):
                continue
            hosts = (between[1 - index], between[index])
            candidates.append(_Candidate(index, pair, (record.timing, own), hosts))
    # two verdicts per candidate, in one batch: its host against its kernels (within its process),
    # and its host against the other side's
    verdicts = compare_timings([comparison for c in candidates for comparison in (c.own, c.hosts)])
    affected: tuple[list[FusionPair], list[FusionPair]] = ([], [])
    for n, c in enumerate(candidates):
        own_bound, host_longer = verdicts[2 * n : 2 * n + 2]
        low, high = host_longer.median_a_ns, host_longer.median_b_ns
        apart = host_longer.verdict == "SLOWER" and low > 0 and high / low >= HOST_FLOOR_RATIO
        own_kernels_faster = c.pair.timing.verdict == ("SLOWER" if c.index == 0 else "FASTER")
        if own_bound.verdict == "SLOWER" and (apart or own_kernels_faster):
            affected[c.index].append(c.pair)
    for index in (0, 1):
        if affected[index]:
            pairs = affected[index]
            yield make_finding("host_bound", _host_evidence(ctx, pairs, index), [p.label for p in pairs])


def waits_for_kernels(ctx: RuleContext) -> Iterator[Finding]:
    """A side whose session calls return only when their kernels end (:func:`call_waits_for_kernels`):
    named, so that such a call is never read as host-bound; listed, not gated."""
    for index in (0, 1):
        found = [
            (p, records[index])
            for p, records in zip(ctx.pairs, ctx.records)
            if not p.failed
            and call_waits_for_kernels(records[index], (p.timing.median_a_ns, p.timing.median_b_ns)[index])
        ]
        if found:
            yield make_finding(
                "waits_for_kernels", _waiting_evidence(found, index), [p.label for p, _ in found], evidenced=False
            )


def _waiting_evidence(found: Sequence[tuple[FusionPair, FusionRecord]], index: int) -> list[Evidence]:
    """The waiting side's figures (medians over the fusions), on its side only."""

    def one(field: str, values: Sequence[float | None]) -> Evidence:
        value = median_or_none([v for v in values if v is not None])
        return Evidence(field, value, None, "ns") if index == 0 else Evidence(field, None, value, "ns")

    hosts = [_host_timing(r) for _, r in found]
    kernels = [(p.timing.median_a_ns, p.timing.median_b_ns)[index] for p, _ in found]
    return [
        one(
            "session_host_per_call_ns",
            [median_or_none(h.session_execute_ns or h.session_call_ns) if h else None for h in hosts],
        ),
        one("kernel_per_call_ns", kernels),
        one("execute_ns", [median_or_none(h.execute_ns) if h else None for h in hosts]),
    ]


def _host_evidence(ctx: RuleContext, pairs: Sequence[FusionPair], index: int) -> list[Evidence]:
    """Host and kernel time per call (medians over ``pairs``), the GPU's wait per call (summed over
    them, one call of each) and per step (each times the live side's calls, which the replay stands
    for), and what the host time is made of (Thunder's call, the session's ``fd.execute``, the
    protocol's); first, on the host-bound side ``index`` alone, how much longer its GPU waits per
    step than the other side's: the side the finding is about, as data."""
    records = [(ctx.fusion_a(p), ctx.fusion_b(p)) for p in pairs]
    calls = [a.call_count for a, _ in records]
    hosts = [[_host(r[i]) or 0.0 for r in records] for i in (0, 1)]
    kernels = [[p.timing.median_a_ns for p in pairs], [p.timing.median_b_ns for p in pairs]]
    waits = [[gpu_wait_ns(r[i], h, k) for r, h, k in zip(records, hosts[i], kernels[i])] for i in (0, 1)]

    def both(field: str, a: float | None, b: float | None, unit: Unit = "ns") -> Evidence:
        return Evidence(field, a, b, unit)

    bound = [float(sum(1 for w in waits[i] if w > 0)) for i in (0, 1)]

    steps = steps_recorded(ctx.a.fusions)

    def per_step(values: list[float]) -> float:
        return sum(v * n for v, n in zip(values, calls)) / steps

    extra = per_step(waits[index]) - per_step(waits[1 - index])
    data = [
        both("extra_gpu_wait_step_ns", *((extra, None) if index == 0 else (None, extra))),
        both("host_bound_fusions", bound[0], bound[1], "count"),
        both("host_per_call_ns", median_or_none(hosts[0]), median_or_none(hosts[1])),
        both("kernel_per_call_ns", median_or_none(kernels[0]), median_or_none(kernels[1])),
        both("gpu_wait_per_call_ns", sum(waits[0]), sum(waits[1])),
        both("host_step_ns", per_step(hosts[0]), per_step(hosts[1])),
        both("kernel_step_ns", per_step(kernels[0]), per_step(kernels[1])),
        both("gpu_wait_step_ns", per_step(waits[0]), per_step(waits[1])),
    ]
    for name in ("session_call_ns", "session_execute_ns", "execute_ns"):
        medians = [
            [
                m
                for r in records
                if (h := _host_timing(r[i])) is not None and (m := median_or_none(getattr(h, name))) is not None
            ]
            for i in (0, 1)
        ]
        if medians[0] or medians[1]:
            data.append(both(name, median_or_none(medians[0]), median_or_none(medians[1])))
    return data
