"""Rules about the circumstances of the two captures: NVFUSER_* variables, the timing protocol,
the quality of the measurement, and the machine and software versions.

Setup findings say the two numbers were not taken like for like, so they are given the whole gap
of every fusion they invalidate: comparing under one protocol on one machine comes first. Their
evidence is data, worded by :mod:`fusiondiff.report.words.setup_words`; the warnings they act on are read
by code (:mod:`fusiondiff.records.notes`). ``DiffResult.warnings`` (:func:`capture_warnings`) are still lines.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from fusiondiff.diff.clocks import TimedClock, max_clock_mhz, running, timed_clock
from fusiondiff.diff.compare import input_bytes
from fusiondiff.diff.context import RuleContext, fusion_gap_ns, make_finding
from fusiondiff.diff.records import Evidence, EvidenceValue, Finding, FusionPair, PropertyChange
from fusiondiff.diff.speed_of_light import peak_evidence
from fusiondiff.diff.stats import MIN_SAMPLES
from fusiondiff.records.environment import RUNTIME_VARIABLES
from fusiondiff.records.model import Capture, FusionRecord
from fusiondiff.records.notes import notes as coded
from fusiondiff.records.units import number

CLOCK_TOLERANCE = 0.05
"""Clock readings further apart than this fraction count as different (boost clocks wander)."""


def env_vars(ctx: RuleContext) -> Iterator[Finding]:
    """The recording processes had other NVFUSER_* environment variables (each by its path,
    ``nvfuser_env.NVFUSER_DISABLE``)."""
    data = [Evidence(c.path, c.a, c.b, "value") for c in ctx.capture_changes("env_vars")]
    if data:
        yield make_finding("env_vars", data, ctx.labels)


def runtime_env(ctx: RuleContext) -> Iterator[Finding]:
    """The recording processes set a variable that changes how CUDA or PyTorch runs a call
    differently (:data:`~fusiondiff.records.environment.RUNTIME_VARIABLES`, each by its path,
    ``runtime_env.CUDA_LAUNCH_BLOCKING``): a root cause of the kernel and host questions. A
    variable that changes neither a call's kernels nor its host time (when modules load: the
    first call only) is shown with the environment, not named as a cause."""
    causes = {v.name for v in RUNTIME_VARIABLES if v.kernel or v.host}
    data = [
        Evidence(c.path, c.a, c.b, "value")
        for c in ctx.capture_changes("runtime_env")
        if c.path.removeprefix("runtime_env.") in causes
    ]
    if data:
        yield make_finding("runtime_env", data, ctx.labels)


def protocol_changes(changes: Sequence[PropertyChange]) -> dict[str, PropertyChange]:
    """The timing protocol's fields that differ, by field name: the ``protocol`` changes
    :func:`~fusiondiff.diff.compare.compare_captures` found, the one place the protocols are compared."""
    return {c.path.removeprefix("protocol."): c for c in changes if c.category == "protocol"}


def l2_mode(ctx: RuleContext) -> Iterator[Finding]:
    """One side flushed L2 before each sample, the other did not: both modes, the L2 size (``None``
    when not recorded), and the inputs' bytes of the five fusions with the largest gaps (the
    fusion's label as ``subject``)."""
    if "l2_mode" not in protocol_changes(ctx.changes):
        return
    l2 = ctx.a.environment.l2_bytes or ctx.b.environment.l2_bytes
    data = [
        Evidence("l2_mode", ctx.a.protocol.l2_mode, ctx.b.protocol.l2_mode, "text"),
        Evidence("l2_bytes", l2 or None, l2 or None, "bytes"),
    ]
    ranked = sorted(ctx.pairs, key=fusion_gap_ns, reverse=True)
    for pair in ranked[:5]:
        working_set = input_bytes(ctx.fusion_a(pair))
        data.append(Evidence("input_bytes", working_set, working_set, "bytes", subject=pair.label))
    yield make_finding("l2_mode", data, ctx.labels)


def _clocks_apart(a: object, b: object) -> bool:
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or max(a, b) <= 0:
        return False
    return abs(a - b) > CLOCK_TOLERANCE * max(a, b)


def timed_sm_clock_mhz(capture: Capture) -> float | None:
    """The SM clock while the capture's samples ran: the median of the readings taken around each
    fusion's samples that are not the GPU's idle clock (:mod:`fusiondiff.diff.clocks`); ``None``
    when none says. ``Environment.sm_clock_mhz`` is read when recording starts, often before the
    GPU has left its idle clock, so it is only the fallback for captures without those readings."""
    return timed_clock(capture).mhz


def _clock_lines(clocks: tuple[TimedClock, TimedClock], changes: Sequence[PropertyChange]) -> list[str]:
    """:func:`_clock_evidence` as lines, for ``DiffResult.warnings`` (still text)."""
    return [
        f"SM clock while timing: {e.a:.0f} MHz in A, {e.b:.0f} MHz in B"
        if e.field == "timed_sm_clock_mhz"
        else f"{e.field}: {number(e.a)} MHz in A, {number(e.b)} MHz in B"
        for e in _clock_evidence(clocks, changes)
    ]


def _timed_clocks(a: Capture, b: Capture) -> tuple[TimedClock, TimedClock]:
    """The SM clock each capture's samples ran at (:func:`~fusiondiff.diff.clocks.timed_clock`),
    idle readings told apart by the two GPUs' highest clock."""
    limit = max_clock_mhz(a, b)
    return timed_clock(a, limit), timed_clock(b, limit)


def _clock_evidence(timed: tuple[TimedClock, TimedClock], changes: Sequence[PropertyChange]) -> list[Evidence]:
    """Clocks that differ between the captures: the SM clock while timing (read around the
    samples, idle readings left out: ``timed_sm_clock_mhz``, of :func:`_timed_clocks`), and among
    the recorded ``clocks`` changes the boost limit and the memory clock (``max_sm_clock_mhz``,
    ``memory_clock_mhz``)."""
    data = []
    va, vb = timed[0].mhz, timed[1].mhz
    if _clocks_apart(va, vb):
        data.append(Evidence("timed_sm_clock_mhz", va, vb, "mhz"))
    clocks = {c.path: c for c in changes if c.category == "clocks"}
    for name in ("max_sm_clock_mhz", "memory_clock_mhz"):
        change = clocks.get(name)
        if change is not None and _clocks_apart(change.a, change.b):
            data.append(Evidence(name, change.a, change.b, "mhz"))
    return data


def idle_clock_notes(clocks: tuple[TimedClock, TimedClock]) -> list[str]:
    """A side whose every SM-clock reading is the idle clock: its clock while timing is not known,
    so the clocks are not compared (a note, not a difference). ``clocks``: A's and B's
    :func:`_timed_clocks`."""
    notes = []
    for side, clock in zip(("A", "B"), clocks):
        if clock.mhz is None and clock.idle:
            idle = ", ".join(f"{r}" for r in clock.idle[:3])
            notes.append(
                f"{side}'s SM clock readings ({idle} MHz) are the GPU's idle clock, read while no kernel ran: "
                f"the clock {side}'s samples ran at is not known, so the clocks are not compared"
            )
    return notes


def _capture_issues(ctx: RuleContext) -> list[Evidence]:
    """Measurement problems that affect every fusion of the captures: the protocol's fields that
    differ (``protocol.method``...) and each capture's profiler trouble (``capture_warning``, on its
    side) that the other does not share. The flush size and the clocks are mechanisms of their own
    (:func:`flush_size`, :func:`clocks`): they follow from the GPU."""
    protocol = protocol_changes(ctx.changes)
    data = (
        [Evidence("protocol.method", protocol["method"].a, protocol["method"].b, "text")]
        if "method" in protocol
        else []
    )
    data += [
        Evidence(f"protocol.{name}", protocol[name].a, protocol[name].b, "value")
        for name in ("warmup", "on_copies")
        if name in protocol
    ]
    # a warning both captures carry describes both the same way: it does not make them unlike
    shared = set(ctx.a.warnings) & set(ctx.b.warnings)
    for side, capture in (("A", ctx.a), ("B", ctx.b)):
        data += [
            Evidence("capture_warning", *_on(side, n.text), "text")
            for n in coded(capture.warnings)
            if n.code == "profiler_trouble" and n.text not in shared
        ]
    return data


def _on(side: str, value: EvidenceValue) -> tuple[EvidenceValue, EvidenceValue]:
    """(A's, B's): ``value`` on ``side``, ``None`` on the other."""
    return (value, None) if side == "A" else (None, value)


def unshared(found_a: list[Evidence], found_b: list[Evidence]) -> list[Evidence]:
    """A's evidence about its own side and B's about its own, but what the other side shows alike
    (same field, subject and value): a weakness both sides share does not make them unlike."""
    if not found_a or not found_b:  # nothing to share: each side's as it is (the common case, per fusion)
        return found_a + found_b
    on_a = {(e.field, e.subject, repr(e.a)) for e in found_a}
    on_b = {(e.field, e.subject, repr(e.b)) for e in found_b}
    return [e for e in found_a if (e.field, e.subject, repr(e.a)) not in on_b] + [
        e for e in found_b if (e.field, e.subject, repr(e.b)) not in on_a
    ]


def _fusion_issues(side: str, f: FusionRecord, max_mhz: float | None, label: str) -> list[Evidence]:
    """One side's weak numbers for a fusion (its label as ``subject``), on that side: ``samples``
    (fewer than :data:`~fusiondiff.diff.stats.MIN_SAMPLES`), ``zero_samples`` (every sample 0 ns)
    and its profiler trouble (``fusion_warning``). A clock that moved is :func:`clocks`'."""
    data: list[Evidence] = []
    if f.failure is not None:
        return data  # no samples because it failed: the failure rules say so
    count = f.timing.count
    if count < MIN_SAMPLES:
        data.append(Evidence("samples", *_on(side, count), "count", subject=label))
    if count and not any(f.timing.samples_ns):
        data.append(Evidence("zero_samples", *_on(side, count), "count", subject=label))
    if f.warnings:
        data += [
            Evidence("fusion_warning", *_on(side, n.text), "text", subject=label)
            for n in coded(f.warnings)
            if n.code == "profiler_trouble"
        ]
    return data


def measurement(ctx: RuleContext) -> Iterator[Finding]:
    """The numbers themselves are weak: few samples, another timing method, missing kernel events,
    clocks that moved during a fusion's samples. Capture-wide evidence first (no ``subject``), then each fusion's
    (its label as ``subject``); the capture-wide kind makes it concern every fusion."""
    capture_data = _capture_issues(ctx)
    fusion_data: list[Evidence] = []
    affected: list[FusionPair] = []
    limit = max_clock_mhz(ctx.a, ctx.b)
    for pair, (fa, fb) in zip(ctx.pairs, ctx.records):
        issues = unshared(_fusion_issues("A", fa, limit, pair.label), _fusion_issues("B", fb, limit, pair.label))
        if issues:
            affected.append(pair)
            fusion_data += issues
    if not capture_data and not fusion_data:
        return
    pairs = ctx.pairs if capture_data else tuple(affected)
    data = capture_data + fusion_data
    yield make_finding("measurement", data, [p.label for p in pairs])


def flush_size(ctx: RuleContext) -> Iterator[Finding]:
    """The L2 flush buffer differs in size (the protocol makes it twice the GPU's L2), with each
    side's L2 size."""
    change = protocol_changes(ctx.changes).get("flush_bytes")
    if change is not None:
        data = [
            Evidence("protocol.flush_bytes", change.a, change.b, "bytes"),
            Evidence("l2_bytes", ctx.a.environment.l2_bytes, ctx.b.environment.l2_bytes, "bytes"),
        ]
        yield make_finding("flush_size", data, ctx.labels)


def _clock_moved(side: str, f: FusionRecord, max_mhz: float | None, label: str) -> list[Evidence]:
    """``sm_clock_moved_mhz``: the (lowest, highest) SM clock read around a fusion's samples on
    ``side``, where they are further apart than :data:`CLOCK_TOLERANCE` (its label as ``subject``)."""
    if f.failure is not None:
        return []
    clocks = running(f.sm_clock_mhz, max_mhz)  # an idle reading was taken while nothing ran
    if len(clocks) >= 2:
        moved = (min(clocks), max(clocks))
        if _clocks_apart(*moved):
            return [Evidence("sm_clock_moved_mhz", *_on(side, moved), "mhz", subject=label)]
    return []


def clocks(ctx: RuleContext) -> Iterator[Finding]:
    """The clocks differ: between the captures (the SM clock the samples ran at, the boost limit,
    the memory clock: :func:`_clock_evidence`; it concerns every fusion), or during a fusion's
    samples (``sm_clock_moved_mhz``, its label as ``subject``)."""
    capture_data = _clock_evidence(ctx.timed_clocks, ctx.changes)
    limit = max_clock_mhz(ctx.a, ctx.b)
    moved: list[Evidence] = []
    affected: list[str] = []
    for pair, (fa, fb) in zip(ctx.pairs, ctx.records):
        found = unshared(_clock_moved("A", fa, limit, pair.label), _clock_moved("B", fb, limit, pair.label))
        if found:
            affected.append(pair.label)
            moved += found
    if capture_data or moved:
        yield make_finding("clocks", capture_data + moved, ctx.labels if capture_data else affected)


GPU_FIELDS = ("gpu_name", "compute_capability", "sm_count", "l2_bytes")
"""The environment's fields that say which GPU a capture ran on; the others are software versions."""
_SHOWN_LAUNCHES = 5
"""Kernels whose launch configuration differs, named in the GPU's evidence (the rest counted)."""


def gpu(ctx: RuleContext) -> Iterator[Finding]:
    """Another GPU model: the GPU's figures that differ (name, compute capability, SM count, L2,
    the boost and memory clocks), then how many matched kernels nvFuser launched with another
    configuration there and the first few of them (launch fields, the kernel as ``subject``),
    then the two measured DRAM peaks and the kernels whose B time they do not predict
    (:func:`~fusiondiff.diff.speed_of_light.peak_evidence`; where a side has no peak, why).
    Another device index of a fusion (where it ran) is said here too."""
    changes = {c.path: c for c in ctx.capture_changes("environment") if c.path in GPU_FIELDS}
    if not changes:
        data = _device_changes(ctx)
        if data:
            yield make_finding("gpu", data, ctx.labels)
        return
    data = [Evidence(c.path, c.a, c.b, "value") for c in changes.values()]
    data += [
        Evidence(c.path, c.a, c.b, "mhz")
        for c in ctx.capture_changes("clocks")
        if c.path in ("max_sm_clock_mhz", "memory_clock_mhz") and c.a != c.b
    ]
    relaunched = [
        (pair, k) for pair in ctx.pairs for k in pair.kernels if any(c.category == "launch" for c in k.changes)
    ]
    matched = sum(len(pair.kernels) for pair in ctx.pairs)
    data += [
        Evidence("kernels_launched_otherwise", len(relaunched), len(relaunched), "count"),
        Evidence("kernels_matched", matched, matched, "count"),
    ]
    for pair, k in relaunched[:_SHOWN_LAUNCHES]:
        data += [
            Evidence(c.path, c.a, c.b, "value", subject=f"{pair.label}/{k.normalized_name}")
            for c in k.changes
            if c.category == "launch"
        ]
    data += peak_evidence(ctx.a, ctx.b, ctx.against_peaks)
    yield make_finding("gpu", data + _device_changes(ctx), ctx.labels)


def _device_changes(ctx: RuleContext) -> list[Evidence]:
    return [
        Evidence(c.path, c.a, c.b, "value", subject=pair.label)
        for pair in ctx.pairs
        for c in pair.changes
        if c.category == "environment"
    ]


def versions(ctx: RuleContext) -> Iterator[Finding]:
    """Another driver, CUDA, torch, nvFuser, Thunder or Python version: each by its path."""
    data = [Evidence(c.path, c.a, c.b, "value") for c in ctx.capture_changes("environment") if c.path not in GPU_FIELDS]
    if data:
        yield make_finding("versions", data, ctx.labels)


def _text(value: object) -> str:
    return "unset" if value is None else number(value)


def capture_warnings(
    a: Capture,
    b: Capture,
    changes: Sequence[PropertyChange],
    clocks: tuple[TimedClock, TimedClock] | None = None,
) -> list[str]:
    """One-line notices about comparing these two captures at all (for ``DiffResult.warnings``);
    ``changes`` are the captures' differences (:func:`~fusiondiff.diff.compare.compare_captures`),
    ``clocks`` their :func:`_timed_clocks` where already known."""
    warnings = []
    protocol = protocol_changes(changes)
    differing = [
        f"{name} {_text(protocol[name].a)} vs {_text(protocol[name].b)}"
        for name in ("method", "l2_mode", "warmup", "samples", "flush_bytes", "on_copies")
        if name in protocol
    ]
    if differing:
        warnings.append(f"timing protocols differ ({', '.join(differing)}): the times are not taken like for like")
    ea, eb = a.environment, b.environment
    if ea.gpu_name and eb.gpu_name and ea.gpu_name != eb.gpu_name:
        warnings.append(f"recorded on different GPUs: {ea.gpu_name} vs {eb.gpu_name}")
    if clocks is None:  # a walk over every fusion's readings: once for both kinds of line
        clocks = _timed_clocks(a, b)
    warnings += [f"clocks differ: {line}" for line in _clock_lines(clocks, changes)]
    return warnings + idle_clock_notes(clocks)
