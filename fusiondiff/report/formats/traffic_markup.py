"""How far each kernel is from its GPU's limit in Markdown and HTML: the markup of
:mod:`.traffic_view`'s rows and words, for the notebook's capture and each side of a report. The
renderers call these hooks and nothing else of it (the terminal's is :mod:`.traffic_text`)."""

from __future__ import annotations

from fusiondiff.records.model import Capture
from fusiondiff.report.formats import md_text
from fusiondiff.report.formats.html_parts import escaped as _e
from fusiondiff.report.formats.html_parts import number_table
from fusiondiff.report.interface import DiffReport
from fusiondiff.report.views.traffic_view import (
    ABOVE_PEAK,
    ALL_ROWS,
    KERNEL_ROWS,
    RANKED_TITLE,
    REPORTED_HEADER,
    SECTION,
    TrafficView,
    capture_view,
    gbs_text,
    kernel_cells,
    percent_text,
    ranked_cells,
    reported_cells,
    reported_intro,
    reported_lead,
    size_text,
)

CSS = """
.fd .traffic h3 { margin: 18px 0 4px; font-size: 15px; }
.fd table.fdt td.above { color: #b3261e; font-weight: 600; }
.fd ul.notes { list-style: none; padding-left: 0; margin: 6px 0; }
.fd sup { color: #5b6470; margin-left: 2px; }
.fd sup.mk { display: inline-block; min-width: 2.6em; text-align: left; }
.fd sup.mk1 { display: inline-block; min-width: 0.6em; text-align: left; }
.fd p.peak { margin: 2px 0 8px; }
"""
"""The HTML report's rules for these parts (added to :data:`fusiondiff.report.formats.html.CSS`)."""


# --- Markdown --------------------------------------------------------------------------------


def _md(text: object) -> str:
    return md_text.inline(text)


def markdown_side(view: TrafficView, title: str) -> list[str]:
    """One capture's part of the Markdown report: the peak, those furthest from the limit, every
    kernel's figures folded, the notes and nvFuser's figures beside them."""
    lines = [f"**{_md(title)}**: {_md(view.peak)}", ""]
    if not view.rows:
        return lines + ["No kernel's bytes are known (failed, untimed, or an input of unknown dtype).", ""]
    if view.ranked:
        header, rows = ranked_cells(view)
        lines += [
            f"{_md(RANKED_TITLE[0].upper() + RANKED_TITLE[1:])}:",
            "",
            *md_text.table(header, rows, "lrrrrrl"),
            "",
        ]
    header, rows = kernel_cells(view)
    body = md_text.table(header, rows, "lrrrrl")
    if len(view.rows) > KERNEL_ROWS:
        body += ["", _md(f"... {len(view.rows) - KERNEL_ROWS} more kernel(s): {ALL_ROWS}.")]
    summary = md_text.html_text(f"{title}: {len(view.rows)} kernel(s), bytes, GB/s and % of peak")
    lines += [f"<details><summary>{summary}</summary>", "", *body, "", "</details>", ""]
    lines += [f"- **{_md(mark)}**: {_md(words)}" for mark, words in view.notes] + [""]
    if view.compared:
        lines += [_md(reported_intro(view)) + ".", "", _md(reported_lead(view)), ""]
        if view.disagreements:
            rows, reasons = reported_cells(view)
            lines += [*md_text.table(REPORTED_HEADER, rows, "lrrrrl"), ""]
            lines += [f"{n}. {_md(reason)}" for n, reason in enumerate(reasons, 1)] + [""]
    return lines


def _side_positions(report: DiffReport, side: str) -> list[int] | None:
    """The fusions of a side a narrowed report speaks of (``None``: all of them)."""
    if not report.selection:
        return None
    return sorted({p.index_a if side == "A" else p.index_b for p in report.result.pairs})


def _sides(report: DiffReport) -> list[tuple[str, Capture, TrafficView]]:
    result = report.result
    return [
        (label, capture, capture_view(capture, _side_positions(report, side)))
        for side, label, capture in (("A", result.label_a, report.a), ("B", result.label_b, report.b))
    ]


def traffic_markdown(report: DiffReport) -> list[str]:
    """The section of the Markdown report: each side's kernels against its own GPU's peak."""
    lines = [f"### {SECTION}", ""]
    for label, _, view in _sides(report):
        lines += markdown_side(view, label)
    return lines


# --- HTML ------------------------------------------------------------------------------------


HTML_HEADER = ("bytes", "GB/s", "% of peak")
"""The columns :func:`html_cells` fills in the capture's timing table."""


def html_cells(view: TrafficView, position: int, kernel_order: int | None) -> str:
    """The figures of a kernel (``None``: of the fusion's kernels together) as table cells: the
    letters of its notes on its bytes, the share of the peak red and marked where it is above it;
    empty cells where it has none."""
    row = view.row(position, kernel_order)
    if row is None:
        return '<td class="num"></td>' * len(HTML_HEADER)
    t = row.traffic
    letters = ",".join(m for m in row.marks if m != ABOVE_PEAK)
    # a mark's place is kept in every row, so the numbers of a column line up
    marks = f'<sup class="mk">{_e(letters)}</sup>' if view.notes else ""
    flag = f'<sup class="mk1">{ABOVE_PEAK if t.above_peak else ""}</sup>' if view.any_above else ""
    return (
        f'<td class="num">{_e(size_text(t.bytes))}{marks}</td><td class="num">{_e(gbs_text(t.achieved_gbs))}</td>'
        f'<td class="num{" above" if t.above_peak else ""}">{_e(percent_text(t.percent_of_peak))}{flag}</td>'
    )


def _notes(view: TrafficView) -> str:
    items = "".join(f"<li><sup>{_e(mark)}</sup> {_e(words)}</li>" for mark, words in view.notes)
    return f'<ul class="meta notes">{items}</ul>' if items else ""


def html_ranked(view: TrafficView) -> str:
    """Above a capture's table: those furthest from the limit."""
    if not view.ranked:
        return ""
    header, rows = ranked_cells(view)
    title = f"<p><strong>{_e(RANKED_TITLE[0].upper() + RANKED_TITLE[1:])}</strong></p>"
    return title + number_table(header, rows, left=(0, len(header) - 1))


def _reported(view: TrafficView) -> str:
    if not view.compared:
        return ""
    parts = [f'<p class="meta">{_e(reported_intro(view))}.<br>{_e(reported_lead(view))}</p>']
    if view.disagreements:
        rows, reasons = reported_cells(view)
        items = "".join(f"<li>{_e(reason)}</li>" for reason in reasons)
        parts += [number_table(REPORTED_HEADER, rows, left=(0, 5)), f'<ol class="meta">{items}</ol>']
    return "".join(parts)


def html_notes(view: TrafficView) -> str:
    """Under a capture's table, which has the figures themselves: the notes they carry and
    nvFuser's own figures beside them."""
    return _notes(view) + _reported(view)


def html_side(view: TrafficView, title: str) -> str:
    """One capture's part of the HTML report: its peak, those furthest from the limit, every
    kernel's figures (folded), the notes they carry, nvFuser's own figures beside them."""
    head = f'<h3>{_e(title)}</h3><p class="peak">{_e(view.peak)}</p>'
    if not view.rows:
        return head
    header, rows = kernel_cells(view)
    more = (
        f'<p class="meta">... {len(view.rows) - KERNEL_ROWS} more kernel(s): {_e(ALL_ROWS)}.</p>'
        if len(view.rows) > KERNEL_ROWS
        else ""
    )
    table = (
        f"<details><summary>{len(view.rows)} kernel(s): bytes, GB/s and % of peak</summary>"
        f"{number_table(header, rows, left=(0, 5))}{more}</details>"
    )
    return head + html_ranked(view) + table + _notes(view) + _reported(view)


def traffic_html(report: DiffReport) -> str:
    """The section of the HTML report: each side's kernels against its own GPU's peak."""
    sides = "".join(f'<div class="traffic">{html_side(view, label)}</div>' for label, _, view in _sides(report))
    return f"<h2>{_e(SECTION)}</h2>{sides}"
