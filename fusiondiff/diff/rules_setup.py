"""Rules about the circumstances of the two captures: NVFUSER_* variables, the timing protocol,
the quality of the measurement, and the machine and software versions.

Setup findings say the two numbers were not taken like for like, so they are given the whole gap
of every fusion they invalidate: comparing under one protocol on one machine comes first.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from fusiondiff.diff.clocks import max_clock_mhz, running, timed_clock
from fusiondiff.diff.compare import input_bytes
from fusiondiff.diff.context import RuleContext, fusion_gap_ns, limited, make_finding, mib, show
from fusiondiff.diff.records import Finding, FusionPair, PropertyChange
from fusiondiff.diff.stats import MIN_SAMPLES
from fusiondiff.distributed import COMMUNICATION_NOT_RECORDED
from fusiondiff.model import SEED_METHOD, Capture, FusionRecord

CLOCK_TOLERANCE = 0.05
"""Clock readings further apart than this fraction count as different (boost clocks wander)."""
_PROFILER_TROUBLE = re.compile(r"cupti|kernel events?|no kernels?|missing kernel|profiler", re.IGNORECASE)


def env_vars(ctx: RuleContext) -> Iterator[Finding]:
    """The recording processes had other NVFUSER_* environment variables."""
    changes = ctx.capture_changes("env_vars")
    if not changes:
        return
    lines = [f"{c.path.removeprefix('nvfuser_env.')}: {show(c.a)} in A, {show(c.b)} in B" for c in changes]
    lines.append("NVFUSER_* variables change what nvFuser compiles for every fusion of the process")
    names = ", ".join(c.path.removeprefix("nvfuser_env.") for c in changes)
    yield make_finding(
        "env_vars", "cause", f"NVFUSER_* variables differ ({names})", lines, ctx.labels, ctx.total_gap_ns()
    )


def protocol_changes(changes: Sequence[PropertyChange]) -> dict[str, PropertyChange]:
    """The timing protocol's fields that differ, by field name: the ``protocol`` changes
    :func:`~fusiondiff.diff.compare.compare_captures` found, the one place the protocols are compared."""
    return {c.path.removeprefix("protocol."): c for c in changes if c.category == "protocol"}


def l2_mode(ctx: RuleContext) -> Iterator[Finding]:
    """One side flushed L2 before each sample, the other did not."""
    if "l2_mode" not in protocol_changes(ctx.changes):
        return
    lines = [
        f"L2 mode: {ctx.a.protocol.l2_mode} in A, {ctx.b.protocol.l2_mode} in B "
        "(cold: L2 flushed before each sample; warm: samples back to back)"
    ]
    l2 = ctx.a.environment.l2_bytes or ctx.b.environment.l2_bytes
    ranked = sorted(ctx.pairs, key=fusion_gap_ns, reverse=True)
    for pair in ranked[:5]:
        working_set = input_bytes(ctx.fusion_a(pair))
        if not l2:
            fit = "L2 size not recorded"
        elif working_set <= l2:
            fit = f"fits in L2 ({mib(l2)}): warm samples read inputs from L2, cold ones from memory"
        else:
            fit = f"exceeds L2 ({mib(l2)}): the mode matters less for this fusion"
        lines.append(f"{pair.label}: inputs {mib(working_set)}, {fit}")
    title = "The captures were timed with a different L2 mode"
    yield make_finding("l2_mode", "setup", title, lines, ctx.labels, ctx.total_gap_ns())


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


def _clock_lines(a: Capture, b: Capture, changes: Sequence[PropertyChange]) -> list[str]:
    """Clocks that differ between the captures: the SM clock while timing (read around the
    samples, idle readings left out), and among the recorded ``clocks`` changes the boost limit and
    the memory clock."""
    lines = []
    limit = max_clock_mhz(a, b)
    va, vb = timed_clock(a, limit).mhz, timed_clock(b, limit).mhz
    if _clocks_apart(va, vb):
        lines.append(f"SM clock while timing: {va:.0f} MHz in A, {vb:.0f} MHz in B")
    clocks = {c.path: c for c in changes if c.category == "clocks"}
    for name in ("max_sm_clock_mhz", "memory_clock_mhz"):
        change = clocks.get(name)
        if change is not None and _clocks_apart(change.a, change.b):
            lines.append(f"{name}: {show(change.a)} MHz in A, {show(change.b)} MHz in B")
    return lines


def idle_clock_notes(a: Capture, b: Capture) -> list[str]:
    """A side whose every SM-clock reading is the idle clock: its clock while timing is not known,
    so the clocks are not compared (a note, not a difference)."""
    limit = max_clock_mhz(a, b)
    notes = []
    for side, capture in (("A", a), ("B", b)):
        clock = timed_clock(capture, limit)
        if clock.mhz is None and clock.idle:
            idle = ", ".join(f"{r}" for r in clock.idle[:3])
            notes.append(
                f"{side}'s SM clock readings ({idle} MHz) are the GPU's idle clock, read while no kernel ran: "
                f"the clock {side}'s samples ran at is not known, so the clocks are not compared"
            )
    return notes


def _method_difference(a: object, b: object) -> str:
    """What two timing methods measure differently. The seed issue's method sums every profiler
    event of one call; kineto and nvfuser both time each kernel through CUPTI, sample by sample."""
    if SEED_METHOD in (a, b):
        return "the seed's method sums every profiler event of one call, which is not a sum of kernel times"
    return "both time kernels through CUPTI, but each records its own samples in its own process"


def _capture_issues(ctx: RuleContext) -> list[str]:
    """Measurement problems that affect every fusion of the captures."""
    lines = []
    protocol = protocol_changes(ctx.changes)
    if "method" in protocol:
        a, b = protocol["method"].a, protocol["method"].b
        lines.append(f"timing method: {a} in A, {b} in B: {_method_difference(a, b)}")
    for name in ("warmup", "flush_bytes", "on_copies"):
        if name in protocol:
            lines.append(f"protocol {name}: {show(protocol[name].a)} in A, {show(protocol[name].b)} in B")
    lines += _clock_lines(ctx.a, ctx.b, ctx.changes)
    # a warning both captures carry describes both the same way: it does not make them unlike
    shared = set(ctx.a.warnings) & set(ctx.b.warnings)
    for side, capture in (("A", ctx.a), ("B", ctx.b)):
        lines += [
            f"{side}'s capture warns: {w}"
            for w in capture.warnings
            if _PROFILER_TROUBLE.search(w) and w not in shared and not w.startswith(COMMUNICATION_NOT_RECORDED)
        ]
    return lines


def _fusion_issues(side: str, f: FusionRecord, max_mhz: float | None) -> list[str]:
    lines: list[str] = []
    if f.failure is not None:
        return lines  # no samples because it failed: the failure rules say so
    if f.timing.count < MIN_SAMPLES:
        lines.append(f"{f.timing.count} sample(s) in {side}, fewer than {MIN_SAMPLES}")
    if f.timing.count and not any(f.timing.samples_ns):
        lines.append(f"every sample in {side} is 0 ns: the profiler recorded no kernel events")
    clocks = running(f.sm_clock_mhz, max_mhz)  # an idle reading was taken while nothing ran
    if len(clocks) >= 2 and _clocks_apart(min(clocks), max(clocks)):
        lines.append(f"SM clock moved between {min(clocks)} and {max(clocks)} MHz during {side}'s samples")
    lines += [f"{side} warns: {w}" for w in f.warnings if _PROFILER_TROUBLE.search(w)]
    return lines


def measurement(ctx: RuleContext) -> Iterator[Finding]:
    """The numbers themselves are weak: few samples, another timing method, missing kernel events,
    clocks that differ or moved."""
    capture_lines = _capture_issues(ctx)
    fusion_lines: list[str] = []
    affected: list[FusionPair] = []
    limit = max_clock_mhz(ctx.a, ctx.b)
    for pair in ctx.pairs:
        issues = _fusion_issues("A", ctx.fusion_a(pair), limit) + _fusion_issues("B", ctx.fusion_b(pair), limit)
        if issues:
            affected.append(pair)
            fusion_lines += [f"{pair.label}: {issue}" for issue in issues]
    if not capture_lines and not fusion_lines:
        return
    pairs = ctx.pairs if capture_lines else tuple(affected)
    lines = capture_lines + limited(fusion_lines)
    if capture_lines:
        title = "The two captures were not measured like for like"
    else:
        title = "Some timings are too weak to compare"
    yield make_finding("measurement", "setup", title, lines, [p.label for p in pairs], ctx.total_gap_ns(pairs))


def gpu_or_versions(ctx: RuleContext) -> Iterator[Finding]:
    """Another GPU, driver, CUDA, torch, nvFuser or Thunder version, or another device index."""
    lines = [f"{c.path}: {show(c.a)} in A, {show(c.b)} in B" for c in ctx.capture_changes("environment")]
    for pair in ctx.pairs:
        lines += [
            f"{pair.label} {c.path}: {show(c.a)} in A, {show(c.b)} in B"
            for c in pair.changes
            if c.category == "environment"
        ]
    if lines:
        title = "The captures come from another GPU or software versions"
        yield make_finding("gpu_or_versions", "setup", title, lines, ctx.labels, ctx.total_gap_ns())


def capture_warnings(a: Capture, b: Capture, changes: Sequence[PropertyChange]) -> list[str]:
    """One-line notices about comparing these two captures at all (for ``DiffResult.warnings``);
    ``changes`` are the captures' differences (:func:`~fusiondiff.diff.compare.compare_captures`)."""
    warnings = []
    protocol = protocol_changes(changes)
    differing = [
        f"{name} {show(protocol[name].a)} vs {show(protocol[name].b)}"
        for name in ("method", "l2_mode", "warmup", "samples", "flush_bytes", "on_copies")
        if name in protocol
    ]
    if differing:
        warnings.append(f"timing protocols differ ({', '.join(differing)}): the times are not taken like for like")
    ea, eb = a.environment, b.environment
    if ea.gpu_name and eb.gpu_name and ea.gpu_name != eb.gpu_name:
        warnings.append(f"recorded on different GPUs: {ea.gpu_name} vs {eb.gpu_name}")
    warnings += [f"clocks differ: {line}" for line in _clock_lines(a, b, changes)]
    return warnings + idle_clock_notes(a, b)
