"""The host's side of a fusion's time: a side whose calls take longer on the host than their
kernels on the GPU, so that the GPU waits for the next launch, longer than on the other side.

``host_bound`` belongs to the host question (:mod:`fusiondiff.diff.causes`): a circumstance of the
side it is found on, reported with what the GPU waits per call and per step, never counted in a
kernel gap nor blamed on the other side. The host question's own gap is ``fd.execute`` against
``fd.execute`` (``FusionPair.host``), measured alike on both sides.

Host times are a few samples per fusion (the protocol's warm-ups after the first, or the session's
own calls) and spread wide: four warm-ups of one 19 us fusion took 12.6 to 36.9 us on the H200 (the
zoo's control, 2026-12-03). A median's gap is therefore not enough. A side is host-bound only where
the statistics that judge kernel time (:mod:`fusiondiff.diff.stats`: noise floor, U test, or with few
samples a large gap with no overlap) confirm that its host time exceeds its kernels' time, and that
the difference to the other side is real: the other side is not confirmed host-bound, or this side's
host time is confirmed longer than the other's, or its kernels confirmed faster.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from fusiondiff.diff.context import RuleContext, make_finding, median_or_none
from fusiondiff.diff.records import Evidence, Finding, FusionPair, Unit
from fusiondiff.diff.stats import compare_timings
from fusiondiff.records.conditions import HostTiming
from fusiondiff.records.model import FusionRecord, Timing

HOST_MARGIN_NS = 2000.0
"""Host-bound: the GPU waits at least 2 us more per call on one side ..."""
HOST_SHARE = 0.10
"""... and at least 10 % of the other side's host time per call more."""


def _host_timing(record: FusionRecord) -> HostTiming | None:
    return record.conditions.host if record.conditions is not None else None


def _host(record: FusionRecord) -> float | None:
    host = _host_timing(record)
    return None if host is None else host.per_call_ns


def _host_samples(record: FusionRecord) -> Timing:
    host = _host_timing(record)
    return Timing(host.per_call_samples_ns if host is not None else ())


def _wait(host_ns: float, kernel_ns: float) -> float:
    return max(host_ns - kernel_ns, 0.0)


def host_bound(ctx: RuleContext) -> Iterator[Finding]:
    """A side's calls take longer on the host than their kernels on the GPU (confirmed by the
    timing statistics), and the GPU waits longer for them than on the other side."""
    # per candidate side: its index, the pair, (kernels, host) of that side and of the other, the extra wait
    candidates: list[tuple[int, FusionPair, tuple[Timing, Timing], tuple[Timing, Timing], float]] = []
    for pair, (ra, rb) in zip(ctx.pairs, ctx.records):  # both sides in one walk
        ha, hb = _host(ra), _host(rb)
        if pair.failed or ha is None or hb is None:
            continue
        wa, wb = _wait(ha, pair.timing.median_a_ns), _wait(hb, pair.timing.median_b_ns)
        sides = ((ra.timing, _host_samples(ra)), (rb.timing, _host_samples(rb)))
        for index, (mine, theirs, their_host) in enumerate(((wa, wb, hb), (wb, wa, ha))):
            if mine > 0 and mine - theirs >= max(HOST_MARGIN_NS, HOST_SHARE * their_host):
                candidates.append((index, pair, sides[index], sides[1 - index], mine - theirs))
    # three verdicts per candidate, in one batch: its host against its kernels, the other side's
    # host against the other side's kernels, and its host against the other side's
    verdicts = compare_timings(
        [comparison for _, _, own, other, _ in candidates for comparison in (own, other, (other[1], own[1]))]
    )
    affected: tuple[list[FusionPair], list[FusionPair]] = ([], [])
    for n, (index, pair, _, _, _) in enumerate(candidates):
        own_bound, other_bound, own_host_longer = (v.verdict == "SLOWER" for v in verdicts[3 * n : 3 * n + 3])
        own_kernels_faster = pair.timing.verdict == ("SLOWER" if index == 0 else "FASTER")
        if own_bound and (not other_bound or own_host_longer or own_kernels_faster):
            affected[index].append(pair)
    for index in (0, 1):
        if affected[index]:
            pairs = affected[index]
            yield make_finding("host_bound", _host_evidence(ctx, pairs), [p.label for p in pairs])


def _host_evidence(ctx: RuleContext, pairs: Sequence[FusionPair]) -> list[Evidence]:
    """Host and kernel time per call (medians over ``pairs``), the GPU's wait per call (summed over
    them, one call of each) and per step (each times the live side's calls, which the replay stands
    for), and what the host time is made of (Thunder's call, the session's ``fd.execute``, the
    protocol's)."""
    records = [(ctx.fusion_a(p), ctx.fusion_b(p)) for p in pairs]
    calls = [a.call_count for a, _ in records]
    hosts = [[_host(r[i]) or 0.0 for r in records] for i in (0, 1)]
    kernels = [[p.timing.median_a_ns for p in pairs], [p.timing.median_b_ns for p in pairs]]
    waits = [[_wait(h, k) for h, k in zip(hosts[i], kernels[i])] for i in (0, 1)]

    def both(field: str, a: float | None, b: float | None, unit: Unit = "ns") -> Evidence:
        return Evidence(field, a, b, unit)

    bound = [float(sum(1 for w in waits[i] if w > 0)) for i in (0, 1)]

    def per_step(values: list[float]) -> float:
        return sum(v * n for v, n in zip(values, calls))

    data = [
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
