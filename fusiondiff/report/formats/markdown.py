"""Markdown report: to paste into a GitHub issue or pull request.

Verdict first, then the ranked findings with their evidence, the fusion and kernel table, both
environments side by side, the recorded differences, and unified diffs of the definitions and of
the CUDA source where both sides captured it. Long parts fold into ``<details>``, which GitHub
renders collapsed. No absolute paths: capture files are relative to their folder.
"""

from __future__ import annotations

from collections.abc import Sequence

from fusiondiff.records.model import traced_name
from fusiondiff.report.formats import md_text
from fusiondiff.report.formats.md_text import table
from fusiondiff.report.formats.traffic_markup import traffic_markdown
from fusiondiff.report.interface import DiffReport, Renderer
from fusiondiff.report.views import content as c
from fusiondiff.report.views import speed_of_light_view
from fusiondiff.report.views.block_view import block_markdown
from fusiondiff.report.views.document import Document, Item, Tables, build_document
from fusiondiff.report.views.environment_view import conditions_markdown
from fusiondiff.report.views.thunder_view import thunder_markdown

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


def _title(document: Document) -> list[str]:
    return [
        *(f"**{a.question}:** {text(a.line)}  " for a in document.answers),
        "",
        *([f"> {text(document.selection)}", ""] if document.selection else []),
        f"## fusiondiff: {text(document.label_a)} vs {text(document.label_b)}",
        "",
        *table(["", document.label_a, document.label_b], [(r.name, r.a, r.b) for r in document.sides]),
        "",
    ]


def _item(item: Item) -> list[str]:
    """One finding: rank, title, rule, role, what it explains and its links, then its evidence."""
    links = "; ".join(
        f"{link.heading} " + ", ".join(f"#{rank} {code(rule)}" for rank, rule in link.targets) for link in item.links
    )
    return [
        f"{item.rank}. **{text(item.title)}**  \n   {code(item.rule)}, {text(item.role)}, {text(item.explains)}"
        + (f"; {links}" if links else ""),
        *(f"   - {text(line)}" for line in item.evidence),
    ]


def _findings(document: Document, report: DiffReport) -> list[str]:
    """The three questions, each with its gate, ledger and ranked findings (its line is the answer's,
    at the top: written once)."""
    lines = []
    for section in document.sections:
        lines += [f"### {text(section.heading)} ({text(section.gate)})", "", f"Ledger: {text(section.ledger)}", ""]
        for item in section.items:
            lines += _item(item)
            if item.peaks:
                lines += speed_of_light_view.peaks_markdown(report.result)
        if section.items:
            lines.append("")
    if document.no_finding:
        lines += [document.no_finding, ""]
    return lines


def _timing_table(tables: Tables, report: DiffReport) -> list[str]:
    rows = tables.timing
    if not rows:
        return []
    body = []
    column = c.timing_column(list(rows))
    for r in rows:
        name = r.fusion if r.kernel is None else f"↳ {r.kernel}"
        t = r.timing
        launch = c.launch_change(r)
        body.append((name, *c.timing_cells(column, t), t.verdict if t else "", launch, r.note))
    lines = table(
        [*c.timing_header(column), "launch (A → B)", "also differs"],
        body,
        "lrrrrlll",
    )
    if tables.timing_left_out:
        lines += ["", text(tables.timing_left_out)]
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


def _environments(document: Document, tables: Tables) -> list[str]:
    rows = tables.environments
    differing = [r.name for r in rows if r.differs]
    body = table(
        ["", document.label_a, document.label_b, "differs"],
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


def _properties(tables: Tables) -> list[str]:
    rows = tables.properties
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


def _warnings(document: Document) -> list[str]:
    if not document.warnings:
        return []
    return ["### Warnings", "", *[f"- {text(w)}" for w in document.warnings], ""]


def render_markdown(report: DiffReport) -> str:
    """The whole Markdown report: the report document (:mod:`fusiondiff.report.views.document`)
    marked up, with the sections drawn from the captures (block level, traffic, conditions,
    Thunder's figures, the diffs of definitions and CUDA sources)."""
    report = c.clean_report(report)
    document = build_document(report.result, report, report.selection, tables=True)
    tables = document.tables
    assert tables is not None  # built with its tables
    sources, missing = c.source_diffs(report)
    lines = [
        *_title(document),
        *_findings(document, report),
        *_timing_table(tables, report),
        *block_markdown(report),
        *traffic_markdown(report),
        *conditions_markdown(report),
        *thunder_markdown(report),
        *_unmatched(report),
        *_environments(document, tables),
        *_properties(tables),
        *_text_diffs("Definitions", c.definition_diffs(report), "definition"),
        *_text_diffs("CUDA source", sources, "CUDA source", missing),
        *_warnings(document),
        f"<sub>{document.footer}</sub>",
    ]
    return "\n".join(lines).rstrip("\n") + "\n"


class MarkdownRenderer(Renderer):
    name = "md"

    def render(self, report: DiffReport) -> str:
        return render_markdown(report)
