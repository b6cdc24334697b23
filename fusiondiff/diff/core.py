"""The differ's pipeline: match, compare, time, find, rank."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence

from fusiondiff.diff.clocks import TimedClock
from fusiondiff.diff.compare import RecordComparer, compare_captures, definition_diff
from fusiondiff.diff.context import RuleContext, median_or_none
from fusiondiff.diff.devices import on_own_device_of
from fusiondiff.diff.findings import find_findings
from fusiondiff.diff.host_stats import compare_hosts
from fusiondiff.diff.match import FusionLeftOver, FusionMatch, KernelMatch, match_fusions, match_kernels
from fusiondiff.diff.noise import compare_processes, compare_timings, measured
from fusiondiff.diff.records import (
    DiffResult,
    Evidence,
    FusionPair,
    KernelPair,
    PropertyChange,
    Side,
    TimingVerdict,
    UnmatchedFusion,
    UnmatchedKernel,
)
from fusiondiff.diff.rules_host import gpu_wait_ns, steps_recorded
from fusiondiff.diff.rules_setup import capture_warnings
from fusiondiff.records.collector import collector_paused
from fusiondiff.records.definition import canonical_definition
from fusiondiff.records.errors import DiffError
from fusiondiff.records.model import Capture, FusionRecord, Timing, traced_name
from fusiondiff.records.notes import from_roundtrip
from fusiondiff.records.processes import processes_of


def diff(
    a: Capture,
    b: Capture,
    *,
    label_a: str | None = None,
    label_b: str | None = None,
    source_a: str | None = None,
    source_b: str | None = None,
) -> DiffResult:
    """Compare two captures: pair fusions and kernels, compare their properties and timings, and
    rank the findings that explain the gap. B's fusions on B's own GPU are compared as if on A's
    (:mod:`fusiondiff.diff.devices`): a device index is where a capture ran. Raises :class:`DiffError` if a capture has no fusions."""
    for side, capture, source in (("A", a, source_a), ("B", b, source_b)):
        if not capture.fusions:
            raise DiffError(
                f"capture {side} ({source or capture.source or capture.kind}) holds no fusions, so there is "
                f"nothing to compare: check its warnings with `fusiondiff show` and capture again"
            )
    # Two loaded captures are millions of objects, which every pass of the cyclic collector walks;
    # the diff allocates enough to start dozens of passes (a second of two 10,000-fusion captures).
    with collector_paused():
        return _diff(a, b, label_a=label_a, label_b=label_b, source_a=source_a, source_b=source_b)


def _diff(
    a: Capture,
    b: Capture,
    *,
    label_a: str | None,
    label_b: str | None,
    source_a: str | None,
    source_b: str | None,
) -> DiffResult:
    b = on_own_device_of(b, a)  # B's own GPU index is where it ran, not a difference from A's
    matches, left_overs = match_fusions(a.fusions, b.fusions)
    different = different_programs(a.fusions, b.fusions, matches)
    if different:  # a name in common is no reason to compare unrelated fusions' times
        left_overs = left_overs + [FusionLeftOver("A", m.index_a, _ANOTHER_PROGRAM) for m in matches]
        left_overs += [FusionLeftOver("B", m.index_b, _ANOTHER_PROGRAM) for m in matches]
        left_overs.sort(key=lambda x: (x.side, x.index))
        matches = []
    records = [(a.fusions[m.index_a], b.fusions[m.index_b]) for m in matches]
    # a failed execution launched nothing that was recorded: its kernels are not compared
    kernel_matches = [
        KernelMatch((), (), ()) if fa.failure or fb.failure else match_kernels(fa.kernels, fb.kernels)
        for fa, fb in records
    ]
    fusion_verdicts, kernel_verdicts = _timing_verdicts(records, kernel_matches, (a, b))
    host_verdicts = _host_verdicts(records)
    comparer = RecordComparer()
    pairs = tuple(
        _fusion_pair(comparer, fa, fb, m, km, label, fv, kv, hv)
        for (fa, fb), m, km, label, fv, kv, hv in zip(
            records,
            matches,
            kernel_matches,
            _pair_labels(records, matches),
            fusion_verdicts,
            kernel_verdicts,
            host_verdicts,
        )
    )
    unmatched = tuple(
        _unmatched_fusion(left.side, (a if left.side == "A" else b).fusions[left.index], left.reason)
        for left in left_overs
    )
    replay_side = _replay_side(a, b)
    live_side, live = ("B", b) if replay_side == "A" else ("A", a)
    represented: tuple[UnmatchedFusion, ...] = ()
    if from_roundtrip(b if replay_side == "B" else a):  # one replay of each distinct fusion, for all its records
        paired = [m.index_a if live_side == "A" else m.index_b for m in matches]
        replayed = {live.fusions[i].replay_key for i in paired}
        stood_for = [left.side == live_side and live.fusions[left.index].replay_key in replayed for left in left_overs]
        represented = tuple(u for u, s in zip(unmatched, stood_for) if s)
        unmatched = tuple(u for u, s in zip(unmatched, stood_for) if not s)
    changes = compare_captures(a, b)
    context = RuleContext(a=a, b=b, pairs=pairs, changes=changes)
    findings, ledgers = find_findings(context)
    subset = _replays_subset(a if replay_side == "A" else b, replay_side, pairs, unmatched)
    return DiffResult(
        label_a=label_a or f"A ({a.kind})",
        label_b=label_b or f"B ({b.kind})",
        source_a=source_a or a.source,
        source_b=source_b or b.source,
        pairs=pairs,
        unmatched=unmatched,
        changes=changes,
        findings=findings,
        warnings=tuple(
            _warnings(a, b, changes, pairs, unmatched, replay_side if subset else None, context.timed_clocks)
        ),
        b_replays_subset=subset,
        b_from_roundtrip=from_roundtrip(a if replay_side == "A" else b),
        replay_side=replay_side,
        ledgers=ledgers,
        host_times=_host_times(records, pairs, steps_recorded(a.fusions)),
        represented=represented,
        against_peaks=context.against_peaks,
        different_programs=different,
    )


_ANOTHER_PROGRAM = "another program: the other side's fusion of this name has another definition and other input shapes"


def different_programs(a: Sequence[FusionRecord], b: Sequence[FusionRecord], matches: Sequence[FusionMatch]) -> bool:
    """The two captures run different programs: no fusion of one has a definition of the other's,
    or, for a pair that only a name made (``nvFusion0`` on both sides), its inputs' shapes: two
    programs' first fusions share a name, not a computation."""
    return all(m.matched_by == "name" and _shapes(a[m.index_a]) != _shapes(b[m.index_b]) for m in matches)


def _shapes(f: FusionRecord) -> tuple[tuple[int, ...], ...]:
    return tuple(t.shape for t in f.inputs)


def _replay_side(a: Capture, b: Capture) -> Side:
    """The side that replays the other: A where A alone is a round trip's merged replay, or A
    alone a replay, else B; so that ``diff B A`` reads a replay as ``diff A B`` does."""
    if from_roundtrip(a) != from_roundtrip(b):
        return "A" if from_roundtrip(a) else "B"
    return "A" if a.kind == "replay" and b.kind != "replay" else "B"


def _replays_subset(
    replay: Capture, side: Side, pairs: Sequence[FusionPair], unmatched: Sequence[UnmatchedFusion]
) -> bool:
    """The replay side replays part of the other: it is a replay, something matched, and every
    fusion left over is the other side's."""
    return replay.kind == "replay" and bool(pairs) and bool(unmatched) and all(u.side != side for u in unmatched)


def _timing_verdicts(
    records: Sequence[tuple[FusionRecord, FusionRecord]],
    kernel_matches: Sequence[KernelMatch],
    captures: tuple[Capture, Capture],
) -> tuple[list[TimingVerdict], list[list[TimingVerdict]]]:
    """Every fusion's and matched kernel's verdict, computed in one batch (it is vectorised),
    judged between processes (:mod:`fusiondiff.diff.noise`) on each side's GPU. The fusions
    timed on both sides are the family whose false alarms the floor bounds; a kernel's verdict
    shares their floor's quantile.

    A verdict depends on the two sides' samples only, so a kernel pair whose samples are its
    fusions' on both sides shares the fusions' verdict instead of joining the batch: a fusion's
    samples are its kernels' sums, so every fusion of one kernel has such a kernel (half the
    fusions of a recorded Llama step). Left out, a twin changes nothing else either: the U test of
    a batch chooses its method from whether any row has ties, and the fusions' row stays in."""
    timings = [(fa.timing, fb.timing) for fa, fb in records]
    places: list[list[int]] = []  # each kernel pair's verdict, as a place in the batch
    for index, ((fa, fb), km) in enumerate(zip(records, kernel_matches)):
        kernel_places = []
        for i, j in km.pairs:
            ta, tb = fa.kernels[i].timing, fb.kernels[j].timing
            if ta.samples_ns == fa.timing.samples_ns and tb.samples_ns == fb.timing.samples_ns:
                kernel_places.append(index)
            else:
                kernel_places.append(len(timings))
                timings.append((ta, tb))
        places.append(kernel_places)
    gpus = (captures[0].environment.gpu_name, captures[1].environment.gpu_name)
    # the family: the fusions that did not fail, where both sides are measured (compare_timings reads
    # that from its arrays); their kernels are not in it
    family = [not fa.failure and not fb.failure for fa, fb in records]
    family += [False] * (len(timings) - len(records))
    verdicts = compare_timings(timings, gpus, family=family)
    several = [i for i, (fa, fb) in enumerate(records) if fa.other_process_timings or fb.other_process_timings]
    if several:  # a side timed in several processes: its fusion judged against their measured spread
        judged = sum(1 for (fa, fb), f in zip(records, family) if f and measured(fa.timing) and measured(fb.timing))
        pooled = compare_processes(
            [(processes_of(records[i][0]), processes_of(records[i][1])) for i in several], gpus, judged
        )
        for i, verdict in zip(several, pooled):
            verdicts[i] = verdict
    return verdicts[: len(records)], [[verdicts[k] for k in kernel_places] for kernel_places in places]


def _host_verdicts(records: Sequence[tuple[FusionRecord, FusionRecord]]) -> list[TimingVerdict | None]:
    """Each pair's host time per call measured alike on both sides (``fd.execute`` in the
    protocol's host calls and warm-ups), judged between processes (:mod:`fusiondiff.diff.host_stats`),
    in a batch of its own (a batch's rows share the U test's method); ``None`` where a side did not
    measure it."""

    def execute(record: FusionRecord) -> Timing | None:
        host = record.conditions.host if record.conditions is not None else None
        return Timing(host.execute_ns) if host is not None and host.execute_ns and not record.failure else None

    sides = [(execute(fa), execute(fb)) for fa, fb in records]
    measured = [(ta, tb) for ta, tb in sides if ta is not None and tb is not None]
    verdicts = iter(compare_hosts(measured)) if measured else iter(())
    return [next(verdicts) if ta is not None and tb is not None else None for ta, tb in sides]


def _host_times(
    records: Sequence[tuple[FusionRecord, FusionRecord]], pairs: Sequence[FusionPair], steps: int
) -> tuple[Evidence, ...]:
    """Each side's host time per call as :attr:`DiffResult.host_times` says; the GPU's wait over
    every call of A's records, divided by the ``steps`` they span."""
    timed = [(r, p) for r, p in zip(records, pairs) if not p.failed]
    hosts = [[c.host if (c := r[i].conditions) is not None else None for r, _ in timed] for i in (0, 1)]

    def medians(field: str, side: int) -> float | None:
        values = [m for h in hosts[side] if h is not None and (m := median_or_none(getattr(h, field))) is not None]
        return median_or_none(values)

    data = [
        Evidence(field, medians(field, 0), medians(field, 1), "ns")
        for field in ("execute_ns", "session_execute_ns", "session_call_ns")
    ]
    kernels = [[p.timing.median_a_ns for _, p in timed], [p.timing.median_b_ns for _, p in timed]]
    data.append(Evidence("kernel_per_call_ns", median_or_none(kernels[0]), median_or_none(kernels[1]), "ns"))
    waits: list[float | None] = []
    for side in (0, 1):
        per_call = [h.per_call_ns if h is not None else None for h in hosts[side]]
        known = [(c, k, r) for c, k, (r, _) in zip(per_call, kernels[side], timed) if c is not None]
        waits.append(
            sum(gpu_wait_ns(r[side], c, k) * r[0].call_count for c, k, r in known if k == k) / steps if known else None
        )
    data.append(Evidence("gpu_wait_step_ns", waits[0], waits[1], "ns"))
    return tuple(e for e in data if e.a is not None or e.b is not None)


def _name(f: FusionRecord) -> str:
    return traced_name(f.name, f.trace)


def _pair_labels(records: Sequence[tuple[FusionRecord, FusionRecord]], matches: Sequence[FusionMatch]) -> list[str]:
    """``nvFusion0 [forward]`` when both sides agree, else ``nvFusion0 [forward] vs fusion0``, or
    ``nvFusion6 [forward], same definition as fusion18`` where only capture order paired it among
    fusions of one definition; a repeated label gets ``#2``, ``#3``... so every label names one pair."""
    labels = []
    seen: Counter[str] = Counter()
    for (fa, fb), match in zip(records, matches):
        name_a, name_b = _name(fa), _name(fb)
        if name_a == name_b:
            label = name_a
        else:
            label = f"{name_a}{', same definition as' if match.by_order else ' vs'} {name_b}"
        seen[label] += 1
        labels.append(label if seen[label] == 1 else f"{label} #{seen[label]}")
    return labels


def _fusion_pair(
    comparer: RecordComparer,
    fa: FusionRecord,
    fb: FusionRecord,
    match: FusionMatch,
    kernel_match: KernelMatch,
    label: str,
    timing: TimingVerdict,
    kernel_timings: Sequence[TimingVerdict],
    host: TimingVerdict | None,
) -> FusionPair:
    records = [(fa.kernels[i], fb.kernels[j]) for i, j in kernel_match.pairs]
    failed, failure_kinds = _failures(fa, fb)
    if failed:
        reason = f"{' and '.join(failed)}'s execution failed: no samples"
        timing = dataclasses.replace(timing, verdict="FAILED", reason=reason)
    kernels = tuple(
        KernelPair(
            normalized_name=ka.normalized_name,
            name_a=ka.name,
            name_b=kb.name,
            order_a=ka.order,
            order_b=kb.order,
            timing=verdict,
            changes=comparer.kernel(ka, kb),
        )
        for (ka, kb), verdict in zip(records, kernel_timings)
    )
    unmatched = _unmatched_kernels(fa, fb, kernel_match) if kernel_match.only_a or kernel_match.only_b else ()
    redefined = fa.structure_hash != fb.structure_hash
    changes = comparer.fusion(fa, fb)
    if failed:  # no segmentation was recorded for a failed execution: not a difference
        changes = tuple(c for c in changes if c.category != "segmentation")
    return FusionPair(
        label=label,
        key_a=fa.key,
        key_b=fb.key,
        index_a=match.index_a,
        index_b=match.index_b,
        matched_by=match.matched_by,
        timing=timing,
        kernels=kernels,
        unmatched_kernels=unmatched,
        changes=changes,
        definition_diff=definition_diff(canonical_definition(fa.definition), canonical_definition(fb.definition))
        if redefined
        else (),
        failed=failed,
        failure_kinds=failure_kinds,
        host=host,
    )


def _failures(fa: FusionRecord, fb: FusionRecord) -> tuple[tuple[Side, ...], tuple[str, ...]]:
    """The sides whose execution failed, and each one's kind of failure (none, for nearly every pair)."""
    if fa.failure is None and fb.failure is None:
        return (), ()
    sides: tuple[tuple[Side, FusionRecord], ...] = (("A", fa), ("B", fb))
    failed = tuple(side for side, f in sides if f.failure is not None)
    return failed, tuple(f.failure.kind for _, f in sides if f.failure is not None)


def _unmatched_kernels(fa: FusionRecord, fb: FusionRecord, kernel_match: KernelMatch) -> tuple[UnmatchedKernel, ...]:
    """The kernels of one side that the match left over, each with the two sides' kernel counts."""
    counts = f"A launches {len(fa.kernels)} kernel(s), B {len(fb.kernels)}"
    only: tuple[tuple[Side, FusionRecord, Sequence[int]], ...] = (
        ("A", fa, kernel_match.only_a),
        ("B", fb, kernel_match.only_b),
    )
    return tuple(
        UnmatchedKernel(side, k.name, k.normalized_name, k.order, k.timing.median_ns, f"only in {side}: {counts}")
        for side, f, indices in only
        for k in (f.kernels[i] for i in indices)
    )


def _unmatched_fusion(side: Side, f: FusionRecord, reason: str) -> UnmatchedFusion:
    return UnmatchedFusion(
        side=side, key=f.key, name=f.name, trace=f.trace, median_ns=f.timing.median_ns, reason=reason
    )


def _warnings(
    a: Capture,
    b: Capture,
    changes: Sequence[PropertyChange],
    pairs: Sequence[FusionPair],
    unmatched: Sequence[UnmatchedFusion],
    subset: Side | None,
    clocks: tuple[TimedClock, TimedClock],
) -> list[str]:
    warnings = capture_warnings(a, b, changes, clocks)
    if not pairs:
        warnings.append(
            "nothing matched: no fusion of A pairs with a fusion of B by its definition or its inputs; "
            "the captures run different programs"
        )
    elif subset:
        other = "A" if subset == "B" else "B"
        warnings.append(
            f"{subset} replays {len(pairs)} of {other}'s fusions: the other {len(unmatched)} were not replayed, "
            "so not compared"
        )
    elif unmatched:
        sides = Counter(u.side for u in unmatched)
        warnings.append(f"{sides['A']} fusion(s) only in A and {sides['B']} only in B were not compared")
    return warnings
