"""Markdown report: to paste into a GitHub issue or pull request.

Verdict first, then the ranked findings with their evidence, the fusion and kernel table, both
environments side by side, the recorded differences, and unified diffs of the definitions and of
the CUDA source where both sides captured it. Long parts fold into ``<details>``, which GitHub
renders collapsed. No absolute paths: capture files are relative to their folder.
"""

from __future__ import annotations

from collections.abc import Sequence

from fusiondiff.diff.causes import node
from fusiondiff.records.limits import TIMING_ROWS
from fusiondiff.records.model import traced_name
from fusiondiff.report.formats import md_text
from fusiondiff.report.formats.diff_text import explains_text
from fusiondiff.report.formats.md_text import table
from fusiondiff.report.formats.traffic_markup import traffic_markdown
from fusiondiff.report.interface import DiffReport, Renderer
from fusiondiff.report.views import content as c
from fusiondiff.report.views import speed_of_light_view
from fusiondiff.report.views.blocks import block_markdown
from fusiondiff.report.views.environment_view import conditions_markdown
from fusiondiff.report.views.thunder_view import thunder_markdown
from fusiondiff.report.words import wording
from fusiondiff.report.words.questions import answer_lines, question_views

FOLD_ROWS = 12
"""Tables longer than this fold into ``<details>``."""


def code(text: str) -> str:
    """Inline code, with a fence longer than any backtick run inside."""
    return md_text.code(text)


def details(summary: str, body: Sequence[str], *, open_: bool = False) -> list[str]:
    summary = md_text.html_text(summary)  # raw HTML: Markdown escapes do not work there
    return [f"<details{' open' if open_ else ''}><summary>{summary}</summary>", "", *body, "", "</details>", ""]


def fenced(lines: Sequence[str], language: str) -> list[str]:
    return md_text.fence(list(lines), language)


text = md_text.inline
"""Running text that may quote a capture (names, sentences of findings, warnings)."""


def _title(report: DiffReport) -> list[str]:
    result = report.result
    return [
        *(f"**{question}:** {text(line)}  " for question, line, _ in answer_lines(result)),
        "",
        *([f"> {text(report.selection)}", ""] if report.selection else []),
        f"## fusiondiff: {text(result.label_a)} vs {text(result.label_b)}",
        "",
        *table(["", result.label_a, result.label_b], [(r.name, r.a, r.b) for r in c.sides(report)]),
        "",
    ]


def _findings(report: DiffReport) -> list[str]:
    """The three questions, each with its gate, ledger and ranked findings (its line is the answer's,
    at the top: written once)."""
    found = report.result.findings
    rules = {f.rank: f.rule for f in found}
    lines = []
    for view in question_views(report.result):
        lines += [
            f"### {text(view.title[0].upper() + view.title[1:])} ({text(view.gate)})",
            "",
            f"Ledger: {text(view.ledger)}",
            "",
        ]
        for f in view.findings:
            links = "; ".join(
                f"{name} " + ", ".join(f"#{r} {code(rules.get(r, '?'))}" for r in ranks)
                for name, ranks in c.finding_links(f)
            )
            lines.append(
                f"{f.rank}. **{text(wording.title(f))}**  \n   {code(f.rule)}, {text(f.role)}, {text(explains_text(f))}"
                + (f"; {links}" if links else "")
            )
            lines += [f"   - {text(line)}" for line in wording.evidence_lines(f)]
            if node(f.rule).peaks:
                lines += speed_of_light_view.peaks_markdown(report.result)
        if view.findings:
            lines.append("")
    if not found:
        lines += ["No finding: no recorded property differs in a way a rule explains.", ""]
    return lines


def _timing_table(report: DiffReport) -> list[str]:
    rows = c.timing_rows(report, TIMING_ROWS)
    if not rows:
        return []
    body = []
    column = c.timing_column(rows)
    for r in rows:
        name = r.fusion if r.kernel is None else f"↳ {r.kernel}"
        t = r.timing
        timing = (
            (
                column.cell(t.median_a_ns),
                column.cell(t.median_b_ns),
                c.ratio(t.ratio),
                c.floor_cell(t.floor, t.p_value),
                t.verdict,
            )
            if t
            else ("", "", "", "", "")
        )
        launch = c.launch_change(r)
        body.append((name, *timing, launch, r.note))
    lines = table(
        [
            "fusion / kernel",
            column.header("A median", brackets=True),
            column.header("B median", brackets=True),
            "B/A",
            "floor",
            "verdict (B vs A)",
            "launch (A → B)",
            "also differs",
        ],
        body,
        "lrrrrlll",
    )
    left_out = c.timing_rows_left_out(report, len(rows))
    if left_out:
        lines += ["", text(left_out)]
    head = ["### Fusions and kernels", ""]
    if len(rows) > FOLD_ROWS:
        moved = sum(1 for r in rows if r.kernel is None and r.timing and r.timing.verdict != "SAME")
        return head + details(
            f"{len(report.result.pairs)} matched fusion(s), {moved} not SAME ({len(rows)} rows)", lines
        )
    return head + lines + [""]


def _unmatched(report: DiffReport) -> list[str]:
    result = report.result
    if not result.unmatched:
        return []
    if result.b_replays_subset:
        names = ", ".join(traced_name(u.name, u.trace) for u in result.not_replayed)
        heading = f"### Not replayed by {result.replay_side}"
        return [heading, "", f"{len(result.not_replayed)} fusion(s) of {result.live_side}: {text(names)}", ""]
    column = c.Column.of(u.median_ns for u in result.unmatched)
    rows = [(u.side, u.name, u.trace or "-", column.cell(u.median_ns), u.reason) for u in result.unmatched]
    header = ["side", "fusion", "trace", column.header("median", brackets=True), "why"]
    return ["### Unmatched fusions", "", *table(header, rows, "lllrl"), ""]


def _environments(report: DiffReport) -> list[str]:
    rows = c.environment_rows(report)
    differing = [r.name for r in rows if r.differs]
    body = table(
        ["", report.result.label_a, report.result.label_b, "differs"],
        [(r.name, r.a, r.b, "≠" if r.differs else "") for r in rows],
    )
    summary = f"environments and timing protocols side by side ({len(differing)} of {len(rows)} differ)"
    lines = ["### Environments", ""]
    lines += (
        [f"Differ: {text(', '.join(differing))}.", ""]
        if differing
        else ["The environments and timing protocols are the same.", ""]
    )
    return lines + details(summary, body)


def _properties(report: DiffReport) -> list[str]:
    rows = c.property_rows(report)
    if not rows:
        return []
    shown = rows[: c.MAX_PROPERTY_ROWS]
    body = table(
        ["where", "property", "A", "B", "category"], [(r.where, code(r.path), r.a, r.b, r.category) for r in shown]
    )
    if len(rows) > len(shown):
        body += ["", f"... {len(rows) - len(shown)} more in the diff record (`--format json`)."]
    head = ["### Recorded differences", ""]
    if len(rows) > FOLD_ROWS:
        return head + details(f"{len(rows)} recorded properties differ", body)
    return head + body + [""]


def _text_diffs(title: str, diffs: Sequence[c.TextDiff], what: str, missing: Sequence[str] = ()) -> list[str]:
    if not diffs and not missing:
        return []
    lines = [f"### {title}", ""]
    for d in diffs:
        summary = f"{d.title}: {what} diff (+{d.added} −{d.removed} lines)"
        body = ([text(d.note), ""] if d.note else []) + fenced(d.lines, "diff")
        lines += details(summary, body)
    if missing:
        lines += [
            f"The source differs (by hash) but was not captured for: {text(', '.join(missing))}. "
            "Capture with `--cuda-source` on both sides to see the diff.",
            "",
        ]
    return lines


def _warnings(report: DiffReport) -> list[str]:
    warnings = [*report.result.warnings]
    for side, capture in (("A", report.a), ("B", report.b)):
        warnings += [f"{side}: {w}" for w in c.capture_warnings(capture)]
    if not warnings:
        return []
    return ["### Warnings", "", *[f"- {text(w)}" for w in warnings], ""]


def render_markdown(report: DiffReport) -> str:
    """The whole Markdown report."""
    from fusiondiff.records.version import __version__

    report = c.clean_report(report)
    sources, missing = c.source_diffs(report)
    lines = [
        *_title(report),
        *_findings(report),
        *_timing_table(report),
        *block_markdown(report),
        *traffic_markdown(report),
        *conditions_markdown(report),
        *thunder_markdown(report),
        *_unmatched(report),
        *_environments(report),
        *_properties(report),
        *_text_diffs("Definitions", c.definition_diffs(report), "definition"),
        *_text_diffs("CUDA source", sources, "CUDA source", missing),
        *_warnings(report),
        f"<sub>fusiondiff {__version__}: medians of per-sample device durations, in the unit each column names; "
        "floor: the smallest gap these data can show between two processes, SAME within it "
        f"({c.P_VALUE_DASH}); B/A above 1 means B is slower.</sub>",
    ]
    return "\n".join(lines).rstrip("\n") + "\n"


class MarkdownRenderer(Renderer):
    name = "md"

    def render(self, report: DiffReport) -> str:
        return render_markdown(report)
