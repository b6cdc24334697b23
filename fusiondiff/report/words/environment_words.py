"""The words for the environment's findings (:mod:`fusiondiff.diff.rules_environment`): titles and
evidence lines from their numbers, units chosen here. :mod:`fusiondiff.report.words.wording` hands these
rules to this module; nothing else words them.

Which side a finding is about is read from its evidence: the side that overlapped more, had more
other processes, was held back more, or waited more on the host.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from fusiondiff.diff.records import Evidence, Finding
from fusiondiff.records.units import duration

REASONS = (
    (0x1, "idle"),
    (0x2, "applications-clock setting"),
    (0x4, "power cap"),
    (0x8, "hardware slowdown"),
    (0x10, "sync boost"),
    (0x20, "thermal limit (software)"),
    (0x40, "thermal limit (hardware)"),
    (0x80, "power brake"),
    (0x100, "display clock setting"),
)
"""NVML's clock event reasons, bit by bit."""
LIMIT_WORDS = {
    "power": "power cap",
    "thermal": "thermal limit",
    "reliability": "reliability limit",
    "board_limit": "board limit",
}

LABELS = {
    "fusion_median_ns": "fusion time (medians, summed over these fusions)",
    "sm_clock_mhz": "SM clock while the middle sample ran (median over the fusions)",
    "windows_overlapped": "sample windows other work touched",
    "window_overlap": "share of the sample windows' time other work ran",
    "other_kernel_overlap_ns": "overlapped the sample windows for",
    "other_kernel_calls": "launches overlapping them",
    "other_kernel_stream": "stream",
    "other_copies": "copies and memsets of other threads overlapping them",
    "first_start_max_ns_max": "latest first CTA start of an SM, latest in a run",
    "sms_used_min": "SMs used, fewest in a run",
    "other_processes": "other processes with a context on the GPU",
    "own_process_listed": "this process told apart by its PID (1: yes)",
    "other_process_sm_util": "their SM utilization, highest NVML sample",
    "other_process_memory_bytes": "their GPU memory, the largest",
    "gpu_util": "GPU utilization, NVML's samples (every process)",
    "limit_power": "clocks held back by the power cap, share of the timing",
    "limit_thermal": "clocks held back by the thermal limit, share of the timing",
    "limit_reliability": "clocks held back by the reliability limit, share of the timing",
    "limit_board_limit": "clocks held back by the board limit, share of the timing",
    "clock_event_reasons": "clock event reasons while the middle sample ran",
    "applications_clock_mhz": "applications clock (SM)",
    "extra_gpu_wait_step_ns": "GPU waiting on the host per step, more than on the other side",
    "session_host_per_call_ns": "the session's call on the host (median)",
    "host_bound_fusions": "fusions whose host time per call exceeds their kernels'",
    "host_per_call_ns": "host time per call (median)",
    "kernel_per_call_ns": "kernel time per call (median)",
    "gpu_wait_per_call_ns": "GPU waiting on the host, one call of each",
    "host_step_ns": "host time per step (per call x the live side's calls, over the steps recorded)",
    "kernel_step_ns": "kernel time per step",
    "gpu_wait_step_ns": "GPU waiting on the host per step",
    "session_call_ns": "Thunder's region call (wrapper, input descriptors, fd.execute)",
    "session_execute_ns": "the session's fd.execute",
    "execute_ns": "fd.execute in the timing's warm-ups",
}


def reasons_text(mask: float | None) -> str:
    """A reasons bit mask in words (``power cap, idle``); ``none``; ``-`` when not read."""
    if mask is None or (isinstance(mask, float) and math.isnan(mask)):
        return "-"
    names = [name for bit, name in REASONS if int(mask) & bit]
    return ", ".join(names) if names else "none"


def value(evidence: Evidence, side: str) -> str:
    """One side's value in its unit; ``-`` where it was not recorded."""
    number = evidence.on(side)
    if evidence.unit == "flags":
        return reasons_text(number)
    if number is None or (isinstance(number, float) and math.isnan(number)):
        return "-"
    if evidence.unit == "ns":
        return duration(number)
    if evidence.unit == "fraction":
        return f"{100 * number:.1f} %"
    if evidence.unit == "mhz":
        return f"{number:.0f} MHz"
    if evidence.unit == "bytes":
        return f"{number / 2**30:.2f} GiB" if number >= 2**30 else f"{number / 2**20:.1f} MiB"
    return f"{number:.0f}"


def evidence_line(e: Evidence) -> str:
    label = LABELS.get(e.field, e.field)
    if e.subject is not None:
        label = f"other kernel {e.subject}: {label}"
    return f"{label}: {value(e, 'A')} in A, {value(e, 'B')} in B"


def _larger(e: Evidence | None) -> tuple[str, str]:
    """(the side with the larger value, the other)."""
    a = (e.on("A") if e is not None else None) or 0.0
    b = (e.on("B") if e is not None else None) or 0.0
    return ("B", "A") if b > a else ("A", "B")


def _of(e: dict[str, Evidence], name: str, side: str) -> str:
    return value(e[name], side) if name in e else "-"


def _clock(e: dict[str, Evidence], side: str, other: str) -> str:
    clock = e.get("sm_clock_mhz")
    if clock is None or clock.a is None or clock.b is None or clock.a == clock.b:
        return ""
    return f"; SM clock {value(clock, side)} against {value(clock, other)} in {other}"


def _other_work(e: dict[str, Evidence], f: Finding) -> str:
    side, other = _larger(e.get("window_overlap"))
    kernels = [x for x in f.data if x.field == "other_kernel_overlap_ns"]
    calls = {x.subject: x for x in f.data if x.field == "other_kernel_calls"}
    streams = {x.subject: x for x in f.data if x.field == "other_kernel_stream"}
    parts = [f"{_of(e, 'windows_overlapped', side)} of the windows"]
    if kernels:
        launches = sum(calls[k.subject].on(side) or 0 for k in kernels if k.subject in calls)
        on = sorted({value(streams[k.subject], side) for k in kernels if k.subject in streams} - {"-"})
        parts.append(f"{launches:.0f} kernel(s)" + (f" on stream {', '.join(on)}" if on else ""))
        parts.append(f"the largest: {kernels[0].subject}")
    return (
        f"other work of {side}'s process overlapped {_of(e, 'window_overlap', side)} of {side}'s sampled windows "
        f"({'; '.join(parts)}){_clock(e, side, other)}"
    )


def _other_processes(e: dict[str, Evidence], f: Finding) -> str:
    side, other = _larger(e.get("other_processes"))
    util = _of(e, "other_process_sm_util", side)
    busy = f"{util} SM utilization at most" if util != "-" else "their utilization during the timing is not known"
    apart = e.get("own_process_listed")
    untold = apart is not None and apart.on(side) == 0.0
    note = "; NVML lists PIDs of another namespace, so only their number is known" if untold else ""
    return (
        f"{_of(e, 'other_processes', side)} other process(es) had a context on {side}'s GPU while it was timed "
        f"({busy}){note}{_clock(e, side, other)}"
    )


def _limit_fraction(e: dict[str, Evidence], side: str) -> list[tuple[float, str]]:
    found = []
    for name, words in LIMIT_WORDS.items():
        x = e.get(f"limit_{name}")
        v = x.on(side) if x is not None else None
        if v:
            found.append((v, words))
    return sorted(found, reverse=True)


def _throttled(e: dict[str, Evidence], f: Finding) -> str:
    def score(side: str) -> float:
        mask = e.get("clock_event_reasons")
        bits = mask.on(side) if mask is not None else None
        return sum(v for v, _ in _limit_fraction(e, side)) + (1.0 if bits and int(bits) & 0xEC else 0.0)

    side, other = ("B", "A") if score("B") > score("A") else ("A", "B")
    limits = _limit_fraction(e, side)
    if limits:
        why = limits[0][1]
        held = f"{limits[0][1]} held the clocks back {100 * limits[0][0]:.1f} % of the timing"
    else:
        why = reasons_text(_bits(e, side))
        held = f"reasons while the middle sample ran: {why}"
    return f"the GPU throttled on its {why} during {side}'s samples ({held}){_clock(e, side, other)}"


def _bits(e: dict[str, Evidence], side: str) -> float | None:
    mask = e.get("clock_event_reasons")
    return None if mask is None else mask.on(side)


def _locked(e: dict[str, Evidence], f: Finding) -> str:
    side = "A" if (_bits(e, "A") or 0) and int(_bits(e, "A") or 0) & 0x2 else "B"
    if not int(_bits(e, side) or 0) & 0x2:
        side, _ = _larger(e.get("applications_clock_mhz"))
    other = "B" if side == "A" else "A"
    return (
        f"{side}'s clocks were held by a clock setting (applications clocks or a locked clock, "
        f"{_of(e, 'applications_clock_mhz', side)}), not throttled{_clock(e, side, other)}"
    )


def host_side(f: Finding) -> str:
    """The side a ``host_bound`` or ``waits_for_kernels`` finding is about: where its one-sided
    evidence lies; in a diff record written before that evidence, the side whose GPU waits more."""
    for e in f.data:
        if e.field in ("extra_gpu_wait_step_ns", "session_host_per_call_ns"):
            return "A" if e.a is not None else "B"
    return _larger(next((e for e in f.data if e.field == "gpu_wait_per_call_ns"), None))[0]


def _host_bound(e: dict[str, Evidence], f: Finding) -> str:
    side = host_side(f)
    other = "B" if side == "A" else "A"
    what = next(
        (words for name, words in _HOST_KINDS if name in e and (e[name].a if side == "A" else e[name].b) is not None),
        "fd.execute",
    )
    return (
        f"{side} is host-bound in {_of(e, 'host_bound_fusions', side)} fusion(s): a call takes "
        f"{_of(e, 'host_per_call_ns', side)} on the host ({what}) against {_of(e, 'kernel_per_call_ns', side)} "
        f"of kernels; the GPU waits {_of(e, 'gpu_wait_step_ns', side)} per step in {side}, "
        f"{_of(e, 'gpu_wait_step_ns', other)} in {other}"
    )


def _waits_for_kernels(e: dict[str, Evidence], f: Finding) -> str:
    side = host_side(f)
    return (
        f"{side}'s calls wait for their kernels: a call takes {_of(e, 'session_host_per_call_ns', side)} on the "
        f"host against {_of(e, 'kernel_per_call_ns', side)} of kernels, while fd.execute's warm-ups take "
        f"{_of(e, 'execute_ns', side)}: the call returns when its kernels end (launches that block, an "
        "allocation that synchronises), so the host waits for the GPU, not the GPU for the host; not host-bound"
    )


_HOST_KINDS = (
    ("session_call_ns", "Thunder's region call: wrapper, input descriptors, fd.execute"),
    ("session_execute_ns", "the session's fd.execute"),
    ("execute_ns", "fd.execute"),
)

TITLES: dict[str, Callable[[dict[str, Evidence], Finding], str]] = {
    "other_work": _other_work,
    "other_processes": _other_processes,
    "gpu_throttled": _throttled,
    "clocks_locked": _locked,
    "host_bound": _host_bound,
    "waits_for_kernels": _waits_for_kernels,
}
"""A title per environment rule."""


def title(finding: Finding) -> str:
    """The finding's title: which fusions, then the sentence."""
    words = TITLES[finding.rule]({e.field: e for e in finding.data if e.subject is None}, finding)
    fusions = finding.fusions
    prefix = fusions[0] if len(fusions) == 1 else f"{len(fusions)} fusions"
    return f"{prefix}: {words}"


def evidence_lines(finding: Finding) -> tuple[str, ...]:
    """The finding's evidence, one line each, after the fusions it concerns where there are several
    (at most five named)."""
    named = ", ".join(finding.fusions[:5]) + (
        f" and {len(finding.fusions) - 5} more" if len(finding.fusions) > 5 else ""
    )
    return (f"fusions: {named}", *(evidence_line(e) for e in finding.data))
