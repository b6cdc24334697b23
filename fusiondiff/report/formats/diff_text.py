"""Renderers of a :class:`DiffResult`: a short plain-text summary for the terminal, and JSON."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from fusiondiff.diff.causes import node
from fusiondiff.diff.ledger import fidelity_findings, status_of
from fusiondiff.diff.records import DiffResult, Finding, FusionPair, Status, TimingVerdict
from fusiondiff.records.codec import to_jsonable
from fusiondiff.records.escape import printable
from fusiondiff.records.gates import FIDELITY, KERNEL
from fusiondiff.records.model import traced_name
from fusiondiff.records.units import Column, duration, floor_cell, ratio
from fusiondiff.report.layout import fit_all
from fusiondiff.report.text import NAME_WIDTH
from fusiondiff.report.views.speed_of_light_view import peaks_text
from fusiondiff.report.words import wording
from fusiondiff.report.words.paths import short_list
from fusiondiff.report.words.questions import answer_lines, kernel_line, question_views

verdict_line = kernel_line
"""The kernel question's verdict line, by its older name (:func:`fusiondiff.report.words.questions.kernel_line`)."""

MAX_FUSION_ROWS = 20
"""Beyond this many fusions, SAME ones are counted instead of listed."""
MAX_FINDINGS = 10
"""Findings shown with their evidence; the JSON record holds all of them."""
MAX_UNMATCHED = 40
"""Unmatched (or not replayed) fusions named; a step's round trip leaves hundreds unreplayed,
every record that shares its distinct fusion's replay, and the JSON record names them all."""


WIDE = (12, 12, 8)
"""The widths of the A median, B median and floor columns; :data:`NARROW` (their headers'
widths) where the table is laid out for a terminal, so that a kernel name of ordinary length
keeps its place in the name column at 100 columns."""
NARROW = (11, 11, 7)


def _row(name: str, t: TimingVerdict, width: int, column: Column, cols: tuple[int, int, int] = WIDE) -> list[str]:
    a, b, p = cols
    numbers = (
        f"{column.cell(t.median_a_ns):>{a}}  {column.cell(t.median_b_ns):>{b}}  {ratio(t.ratio):>7}  "
        f"{floor_cell(t.floor, t.p_value):>{p}}  {t.verdict}"
    )
    if len(name) > width:  # an ATen kernel's C++ signature: a line of its own, its numbers in the column below
        return [f"  {name}", f"  {'':<{width}}  {numbers}"]
    return [f"  {name:<{width}}  {numbers}"]


def _kernels_shown(pair: FusionPair) -> bool:
    """A pair's kernels get rows of their own where one is unmatched or, of several, one differs."""
    return bool(pair.unmatched_kernels) or (
        len(pair.kernels) > 1 and any(k.timing.verdict != "SAME" for k in pair.kernels)
    )


def _pair_lines(pair: FusionPair, width: int, column: Column, cols: tuple[int, int, int] = WIDE) -> list[str]:
    lines = _row(pair.label, pair.timing, width, column, cols)
    if _kernels_shown(pair):
        for k in pair.kernels:
            lines += _row(f"  {k.normalized_name}", k.timing, width, column, cols)
        lines += [
            f"    {k.normalized_name}: only in {k.side} ({duration(k.median_ns)} median)"
            for k in pair.unmatched_kernels
        ]
    return lines


def listed_pairs(pairs: Sequence[FusionPair], limit: int = MAX_FUSION_ROWS) -> list[FusionPair]:
    """The fusions a summary lists, in capture order: all of them up to ``limit``; past it, every
    one whose speed differs (or that has a kernel one side lacks), then the SAME ones that take
    longest, up to ``limit`` rows in all (a table of SAME fusions still shows the largest)."""
    if len(pairs) <= limit:
        return list(pairs)
    moved = {i for i, p in enumerate(pairs) if p.timing.verdict != "SAME" or p.unmatched_kernels}

    def median(i: int) -> float:
        value = pairs[i].timing.median_a_ns
        return -1.0 if math.isnan(value) else value

    same = sorted((i for i in range(len(pairs)) if i not in moved), key=median, reverse=True)
    kept = moved | set(same[: max(limit - len(moved), 0)])
    return [p for i, p in enumerate(pairs) if i in kept]


P_VALUE_DASH = "- where nothing was measured"
"""What a ``-`` in the floor column means, in every report."""
LEGEND = (
    "B/A: B's median over A's (above 1: B is slower); floor: the smallest gap (log ratio) these data can show "
    f"between two processes, SAME within it, {P_VALUE_DASH}"
)
"""What the columns of the fusion table mean; the Markdown and HTML reports say it too."""


NUMBERS_WIDTH = 2 + NARROW[0] + 2 + NARROW[1] + 2 + 7 + 2 + NARROW[2] + 2 + len("verdict (B vs A)")
"""The fusion table's columns after the name, laid out for a terminal."""


def _fusion_section(result: DiffResult, line_width: int | None = None) -> list[str]:
    if not result.pairs:
        return []
    listed = listed_pairs(result.pairs)
    # the column fits the labels and the kernel names of ordinary length (an ATen kernel's C++
    # signature, longer than NAME_WIDTH, gets a line of its own instead)
    kernels = [
        len(k.normalized_name) + 2  # indented under its fusion
        for p in listed
        if _kernels_shown(p)
        for k in p.kernels
        if len(k.normalized_name) <= NAME_WIDTH
    ]
    width = max([min(max(len(p.label) + 4 for p in listed), 60), *kernels])
    cols = WIDE
    if line_width is not None:  # a longer label gets a line of its own, its numbers in the row below
        width = min(width, max(line_width - 2 - NUMBERS_WIDTH, len("fusion / kernel")))
        cols = NARROW
    verdicts = [v for p in listed for v in (p.timing, *(k.timing for k in p.kernels))]
    times = [t for v in verdicts for t in (v.median_a_ns, v.median_b_ns)]
    column = Column.of(times)  # A's and B's medians in one unit, to be read side by side
    header = (
        f"  {'fusion / kernel':<{width}}  {column.header('A median'):>{cols[0]}}  {column.header('B median'):>{cols[1]}}  "
        f"{'B/A':>7}  {'floor':>{cols[2]}}  verdict (B vs A)"
    )
    lines = ["fusions", header]
    for pair in listed:
        lines += _pair_lines(pair, width, column, cols)
    if len(listed) < len(result.pairs):
        lines.append(
            f"  ... {len(result.pairs) - len(listed)} more fusion(s) SAME, not listed (the JSON record has all: --json)"
        )
    lines.append(f"  {LEGEND}")
    return lines


def explains_text(f: Finding) -> str:
    """What a finding explains, in words, as its status (:func:`~fusiondiff.diff.ledger.status_of`)
    says: its share of the gap (the part alone and the part joint, with whom), the finding it is
    evidence for, the gap nothing took, or nothing."""
    status = status_of(f)
    if status == "unexplained":
        if f.explained_ns > 0:
            return f"{duration(f.explained_ns)} unexplained"
        kernels = [e for e in f.data if e.field == "kernel_median_ns"]
        gap = sum(abs((e.on("B") or 0.0) - (e.on("A") or 0.0)) for e in kernels)
        return f"kernels {duration(gap)} apart inside a fusion of the same speed, counted in no gap"
    return _STATUS_WORDS[status](f)


def _joint_text(f: Finding) -> str:
    """``explains 194.6 us alone and 5.50 us jointly with index_value_range``: its own part and
    the part it shares, each said once."""
    shared = f.explained_ns - f.alone_ns
    with_whom = f"jointly with {', '.join(f.joint_with)}"
    if f.alone_ns > 0 and shared > 0:
        return f"explains {duration(f.alone_ns)} alone and {duration(shared)} {with_whom}"
    return f"explains {duration(f.explained_ns)} {with_whom}"


_STATUS_WORDS: dict[Status, Callable[[Finding], str]] = {
    "cause": lambda f: f"explains {duration(f.explained_ns)}",
    "joint": _joint_text,
    "evidence": lambda f: "evidence for " + ", ".join(f"#{r}" for r in f.caused_by),
    "failure": lambda f: "no timing on the failed side",
    "reported": lambda f: "reported, not counted in a gap",
    "not_seen": lambda f: "not seen acting: counted in no gap",
    "not_measured": lambda f: "its fusions' times not measured: counted in no gap",
    "no_time": lambda f: "explains no measurable time",
    "unexplained": lambda f: f"{duration(f.explained_ns)} unexplained",
}
"""Each status in words (the unexplained one is worded above, with its kernels' gap)."""


def _finding_lines(f: Finding, rules_by_rank: dict[int, str]) -> list[str]:
    lines = [f"  {f.rank}. [{f.rule}, {f.role}] {wording.title(f)}  ({explains_text(f)})"]
    lines += [f"       {line}" for line in wording.evidence_lines(f)]
    for heading, ranks in (("supported by", f.supported_by), ("follows from", f.caused_by)):
        if ranks:
            named = ", ".join(f"#{r} {rules_by_rank.get(r, '?')}" for r in ranks)
            lines.append(f"       {heading}: {named}")
    return lines


def _wrap(items: list[str], indent: str, width: int = 100) -> list[str]:
    """Comma-separated items on lines of at most ``width`` characters, never splitting an item."""
    lines: list[str] = []
    line = ""
    for item in items:
        candidate = f"{line}, {item}" if line else item
        if line and len(indent) + len(candidate) > width:
            lines.append(indent + line + ",")
            candidate = item
        line = candidate
    return lines + [indent + line]


_ROUNDTRIP_HINT = "; `fusiondiff roundtrip` pairs every live record with its distinct fusion's replay"


def _more_line(count: int, hint: str = "") -> list[str]:
    if count <= MAX_UNMATCHED:
        return []
    return [f"  ... {count - MAX_UNMATCHED} more in the JSON record (--json FILE){hint}"]


def render_diff_text(result: DiffResult, width: int | None = None, selection: str = "") -> str:
    """A short terminal summary: first the answer (each question's line, labelled ``kernel:``,
    ``host:``, ``fidelity:``), then how it was narrowed (``selection``, :mod:`fusiondiff.report.views.filters`)
    and where it came from (each side's path); per fusion the medians (us), ratio and verdict of B
    relative to A; unmatched fusions; each question's ledger and ranked findings with their
    evidence; warnings. Plain text, every line escaped (:func:`~fusiondiff.records.escape.printable`),
    since names and sources come from captures; no line wider than ``width``
    (:mod:`fusiondiff.report.layout`; None: as long as they are)."""
    lines = [
        *(f"{question}: {line}" for question, line, _ in answer_lines(result)),
        *([f"({selection})"] if selection else []),
        f"{result.label_a}: {short_list(result.source_a or '?')}",
        f"{result.label_b}: {short_list(result.source_b or '?')}",
        "",
    ]
    section = _fusion_section(result, width)
    if section:
        lines += [*section, ""]
    if result.b_replays_subset:
        names = [traced_name(u.name, u.trace) for u in result.not_replayed[:MAX_UNMATCHED]]
        lines += [
            f"not replayed by {result.replay_side} ({len(result.not_replayed)} fusion(s) of {result.live_side})",
            *_wrap(names, "  "),
        ]
        lines += [*_more_line(len(result.not_replayed), _ROUNDTRIP_HINT if result.b_from_roundtrip else ""), ""]
    elif result.unmatched:
        lines.append("unmatched fusions")
        for u in result.unmatched[:MAX_UNMATCHED]:
            lines.append(f"  {u.side}: {traced_name(u.name, u.trace)} ({duration(u.median_ns)} median): {u.reason}")
        lines += [*_more_line(len(result.unmatched)), ""]
    lines += _question_sections(result, width)
    if result.warnings:
        lines.append("warnings")
        lines += [f"  {w}" for w in result.warnings]
        lines.append("")
    return "\n".join(fit_all((printable(line) for line in lines), width)).rstrip("\n") + "\n"


def questions_json(result: DiffResult) -> dict[str, Any]:
    """Each question's verdict line, ledger line, whether it could be judged and whether it passes,
    ``exit_code`` with its gate added, and the ranks of its findings (fidelity: the kernel findings
    of what B runs differently)."""
    return {
        view.question: {
            "verdict": view.verdict,
            "ledger": view.ledger,
            "judged": result.judged(view.question),
            "passes": result.passes(view.question),
            "exit_code": result.exit_code(gates=(view.question,)),
            "findings": [f.rank for f in (fidelity_findings(result) if view.question == FIDELITY else view.findings)],
        }
        for view in question_views(result)
    }


def _question_sections(result: DiffResult, width: int | None = None) -> list[str]:
    """Each question's section: its gate and ledger, then its findings, ranked (failures first, then
    by the time they explain, each gap counted once), :data:`MAX_FINDINGS` in all, the GPU's with
    each kernel against the two GPUs' peaks under it. The host and fidelity sections are left out
    where they pass with nothing to say."""
    rules_by_rank = {f.rank: f.rule for f in result.findings}
    lines: list[str] = []
    budget = MAX_FINDINGS
    for view in question_views(result):
        # a question that passes, or was not measured (its line at the top says so), needs no section
        quiet = view.question != KERNEL and not view.findings and result.outcome(view.question) != "fails"
        if quiet and not result.ledger(view.question).gap_ns > 0:
            continue
        lines.append(f"{view.title} ({view.gate}): {view.ledger}")
        for f in view.findings[:budget]:
            lines += _finding_lines(f, rules_by_rank)
            if node(f.rule).peaks:
                lines += peaks_text(result, width)
        if len(view.findings) > budget:
            lines.append(f"  ... {len(view.findings) - budget} more finding(s) in the JSON record (--json)")
        budget = max(budget - len(view.findings), 0)
        lines.append("")
    return lines


def json_safe(value: Any) -> Any:
    """JSON-ready data with NaN and infinity (which JSON lacks) written as null."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:  # most values: no isinstance chain
        return value
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    return value


def render_diff_json(result: DiffResult) -> str:
    """The whole diff record as JSON (NaN and infinity as null), with the verdict added:
    ``verdict`` (the kernel question's line), ``same_speed``, ``properties_identical``,
    ``comparable`` (both), ``exit_code`` (the default gate) and ``questions`` (each question's
    verdict line, whether it passes, and the exit code with its gate added)."""
    data = json_safe(to_jsonable(wording.worded(result)))
    data["verdict"] = verdict_line(result)
    data["same_speed"] = result.same_speed
    data["properties_identical"] = result.properties_identical
    data["comparable"] = result.comparable
    data["exit_code"] = result.exit_code()
    data["questions"] = questions_json(result)
    return indented_json(data)


def indented_json(data: Any) -> str:
    """``json.dumps(data, indent=1, allow_nan=False)`` and a newline, byte for byte, made by the C
    encoder and re-indented by msgspec: the indenting encoder is pure Python, 20 times slower
    (minutes for a diff of 100,000 kernels)."""
    import msgspec

    return msgspec.json.format(json.dumps(data, allow_nan=False), indent=1) + "\n"
