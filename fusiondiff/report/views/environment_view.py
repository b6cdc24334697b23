"""What each side's timing ran beside, in the text, Markdown and HTML reports: per fusion and side,
the host time of a call (apart from its kernels' time), how much of the sample windows other work
of the process overlapped, other processes on the GPU, the clocks and the throttle reasons while
the middle sample ran (:class:`fusiondiff.records.conditions.TimingConditions`). Numbers from the records,
units chosen here; empty when no record has them (files older than issue #27).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from html import escape

from fusiondiff.diff.context import fusion_gap_ns
from fusiondiff.diff.rules_environment import THROTTLE_BITS
from fusiondiff.records.conditions import TimingConditions
from fusiondiff.records.units import duration
from fusiondiff.report.interface import DiffReport
from fusiondiff.report.words.environment_words import reasons_text

MAX_PAIRS = 12
"""Fusions shown: those the environment's findings name, then the largest gaps."""
HEADER = (
    "fusion",
    "side",
    "host per call",
    "kernels",
    "GPU waits per call",
    "other work (windows, time)",
    "other processes",
    "SM / memory clock",
    "clock event reasons",
)
HOST_KINDS = {"thunder_call": "Thunder call", "session_execute": "session's fd.execute", "execute": "fd.execute"}
NOTE = (
    "host per call: Thunder's region call (wrapper, input descriptors, fd.execute) where the session made "
    "one, else the session's fd.execute, else fd.execute in the timing's warm-ups, fusiondiff's own work left "
    "out; other work: of the recording process's other threads, the share of sample windows it touched and "
    "of their time; clocks and reasons: NVML, read while the middle sample ran; '-': not recorded."
)


@dataclass(frozen=True)
class ConditionsRow:
    """One side of one fusion pair."""

    fusion: str
    side: str
    cells: tuple[str, ...]


def _cells(conditions: TimingConditions | None, kernel_ns: float) -> tuple[str, ...]:
    c = conditions or TimingConditions()
    host = c.host.per_call_ns if c.host else None
    kind = HOST_KINDS.get(c.host.kind or "", "") if c.host else ""
    wait = "-" if host is None else duration(max(host - kernel_ns, 0.0))
    work = "-"
    if c.other_work is not None:
        w = c.other_work
        work = f"{w.windows_overlapped}/{len(w.overlap_fractions)}, {100 * w.mean_fraction:.1f} %"
    d = c.device
    procs = clocks = reasons = "-"
    if d is not None:
        procs = str(d.other_process_count) + ("" if d.own_process_listed else " (PIDs apart)")
        if not d.processes_listed:  # not even this one: NVML shows none here (no permission, a container)
            procs = "not visible"
        sm = f"{d.sm_clock_mhz}" if d.sm_clock_mhz is not None else "-"
        mem = f"{d.memory_clock_mhz}" if d.memory_clock_mhz is not None else "-"
        clocks = f"{sm} / {mem} MHz"
        mid = d.reasons_while_running
        reasons = reasons_text(mid) + (
            " (throttled)" if mid is not None and any(mid & b for b in THROTTLE_BITS) else ""
        )
    host_text = "-" if host is None else f"{duration(host)} ({kind})"
    return (host_text, duration(kernel_ns), wait, work, procs, clocks, reasons)


def conditions_rows(report: DiffReport) -> Iterator[ConditionsRow]:
    """The rows of the table: the pairs named by environment findings first, then by gap."""
    pairs = [p for p in report.result.pairs if not p.failed]
    if not any(report.fusion_a(p).conditions or report.fusion_b(p).conditions for p in pairs):
        return
    named = {label for f in report.result.findings if f.rule in _RULES for label in f.fusions}
    pairs.sort(key=lambda p: (p.label not in named, -fusion_gap_ns(p)))
    for pair in pairs[:MAX_PAIRS]:
        fa, fb = report.fusion_a(pair), report.fusion_b(pair)
        yield ConditionsRow(pair.label, "A", _cells(fa.conditions, pair.timing.median_a_ns))
        yield ConditionsRow(pair.label, "B", _cells(fb.conditions, pair.timing.median_b_ns))


_RULES = ("other_work", "other_processes", "gpu_throttled", "clocks_locked", "host_bound")


def conditions_text(report: DiffReport, width: int | None = None) -> str:
    """The section after the terminal summary, every line escaped (names come from captures), its
    columns folded into groups where the table is wider than ``width`` (:func:`layout.table`)."""
    from fusiondiff.records.escape import printable
    from fusiondiff.report.layout import fit_all, table

    rows = list(conditions_rows(report))
    if not rows:
        return ""
    body = [(r.fusion if r.side == "A" else "", r.side, *r.cells) for r in rows]
    lines = ["", "conditions while timing (host time kept apart from kernel time; '-': not recorded)"]
    lines += table(HEADER, body, width)
    return "".join(printable(line) + "\n" for line in fit_all(lines, width))


def conditions_markdown(report: DiffReport) -> list[str]:
    """The Markdown section (empty when nothing was recorded)."""
    rows = list(conditions_rows(report))
    if not rows:
        return []
    from fusiondiff.report.formats.md_text import table

    body = [(r.fusion if r.side == "A" else "", r.side, *r.cells) for r in rows]
    return ["### Conditions while timing", "", NOTE, "", *table(HEADER, body, "ll" + "r" * (len(HEADER) - 2)), ""]


def conditions_html(report: DiffReport) -> str:
    """The HTML section (empty when nothing was recorded)."""
    rows = list(conditions_rows(report))
    if not rows:
        return ""
    head = "".join(f"<th>{escape(h)}</th>" for h in HEADER)
    body = "".join(
        f"<tr><td>{escape(r.fusion) if r.side == 'A' else ''}</td><td>{r.side}</td>"
        + "".join(f'<td class="num">{escape(v)}</td>' for v in r.cells)
        + "</tr>"
        for r in rows
    )
    return (
        "<h2>Conditions while timing</h2>"
        f'<p class="meta">{escape(NOTE)}</p>'
        f'<div class="tw"><table class="fdt"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
    )
