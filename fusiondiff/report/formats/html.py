"""HTML report: one self-contained page, readable offline.

The same content as the Markdown report, plus each fusion's and kernel's sample distributions of
both sides as inline SVG plots, and coloured unified diffs. Everything is inline (CSS, SVG); the
page loads nothing, so it can be mailed, attached to an issue or opened years later.
:func:`capture_html` and :func:`diff_html_fragment` are the pieces notebooks show (``_repr_html_``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape

from fusiondiff.diff.records import DiffResult
from fusiondiff.records.escape import printable_lines
from fusiondiff.records.model import Capture, traced_name
from fusiondiff.report.formats.block_html import block_html
from fusiondiff.report.formats.html_parts import escaped as _e
from fusiondiff.report.formats.plots import COLOR_A, COLOR_B, strip_plot_svg
from fusiondiff.report.formats.traffic_markup import CSS as TRAFFIC_CSS
from fusiondiff.report.formats.traffic_markup import HTML_HEADER, html_cells, html_notes, html_ranked, traffic_html
from fusiondiff.report.interface import DiffReport, Renderer
from fusiondiff.report.views import content as c
from fusiondiff.report.views import speed_of_light_view
from fusiondiff.report.views.document import Document, Item, Tables, build_document
from fusiondiff.report.views.environment_view import conditions_html
from fusiondiff.report.views.thunder_view import thunder_html
from fusiondiff.report.views.traffic_view import capture_view

CSS = (
    f"""
.fd {{ font-family: -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: #1d2125;
  font-size: 14px; line-height: 1.45; }}
body.fdpage {{ margin: 0; background: #f6f7f9; }}
.fdpage main {{ max-width: 1840px; margin: 0 auto; padding: 24px 28px 40px; background: #fff; }}
.fd h1 {{ font-size: 22px; margin: 0 0 12px; }}
.fd h2 {{ font-size: 17px; margin: 28px 0 10px; padding-bottom: 4px; border-bottom: 1px solid #e3e5e8; }}
.fd .verdict {{ padding: 10px 14px; border-radius: 6px; font-size: 15px; margin: 8px 0 16px; }}
.fd .answers .verdict {{ padding: 6px 12px; font-size: 14px; margin: 4px 0; }}
.fd .verdict.ok {{ background: #e8f5e9; border-left: 5px solid #2e7d32; }}
.fd .verdict.bad {{ background: #fff4e5; border-left: 5px solid #e08a00; }}
.fd .verdict.unknown {{ background: #f3e5f5; border-left: 5px solid #7b1fa2; }}
.fd .sides {{ display: grid; grid-template-columns: 1fr 1fr; gap: 14px; }}
.fd .side {{ border: 1px solid #e3e5e8; border-radius: 6px; padding: 10px 14px; }}
.fd .side h3 {{ margin: 0 0 6px; font-size: 15px; }}
.fd .side.a h3 {{ color: {COLOR_A}; }} .fd .side.b h3 {{ color: {COLOR_B}; }}
.fd .side dl {{ display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0; }}
.fd .side dt {{ color: #5b6470; white-space: nowrap; }} .fd .side dd {{ margin: 0; overflow-wrap: anywhere; }}
/* table.fdt: specific enough to win over notebook front ends' table styles (JupyterLab right-aligns cells) */
.fd table.fdt {{ border-collapse: collapse; margin: 6px 0; }}
.fd table.fdt th, .fd table.fdt td {{ border-bottom: 1px solid #eceef0; padding: 4px 8px; text-align: left; vertical-align: middle; }}
.fd table.fdt th {{ background: #f3f4f6; font-weight: 600; }}
/* a table wider than the page scrolls inside its box; a long fusion label wraps (at " vs ") */
.fd .tw {{ max-width: 100%; overflow-x: auto; }}
.fd table.fdt.timings td:first-child {{ min-width: 12em; max-width: 20em; overflow-wrap: break-word; }}
.fd table.fdt td.num {{ text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }}
.fd table.fdt tr.kernel td:first-child {{ padding-left: 26px; color: #3c434b; }}
.fd table.fdt tr.fusion td {{ border-top: 1px solid #cfd3d8; }}
.fd table.fdt tr.fusion td:first-child {{ font-weight: 600; }}
.fd table.fdt tr.differs td {{ background: #fff8e1; }}
.fd .v {{ font-weight: 600; font-size: 12px; padding: 1px 6px; border-radius: 3px; white-space: nowrap; }}
.fd .v.SAME {{ background: #e8f5e9; color: #2e7d32; }} .fd .v.SLOWER {{ background: #fdecea; color: #b3261e; }}
.fd .v.FASTER {{ background: #e3f0fc; color: #1f5fa8; }} .fd .v.AMBIGUOUS, .fd .v.NOT.MEASURED {{ background: #f3e5f5; color: #7b1fa2; }} .fd .v.FAILED {{ background: #fdecea; color: #b71c1c; }}
.fd .launch {{ font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }}
.fd .launch > div {{ min-width: 200px; }} .fd .launch span {{ white-space: nowrap; }} .fd .launch i {{ font-style: normal; color: #5b6470; }}
.fd .launch .chg {{ font-weight: 700; background: #fff1c2; }}
.fd code, .fd pre {{ font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }}
.fd ol.findings {{ padding-left: 0; list-style: none; }}
.fd ol.findings > li {{ border: 1px solid #e3e5e8; border-radius: 6px; padding: 8px 14px; margin: 8px 0; }}
.fd .rank {{ display: inline-block; min-width: 22px; text-align: center; background: #1d2125; color: #fff;
  border-radius: 11px; font-size: 12px; margin-right: 6px; }}
.fd .role {{ font-size: 12px; padding: 1px 6px; border-radius: 3px; background: #eceef0; margin-left: 6px; }}
.fd .role.cause {{ background: #fdecea; color: #b3261e; }} .fd .role.setup {{ background: #fff4e5; color: #8a5300; }}
.fd .role.consequence {{ background: #e3f0fc; color: #1f5fa8; }}
.fd .meta {{ color: #5b6470; font-size: 13px; }}
.fd ul.evidence {{ margin: 4px 0 2px; }}
.fd details {{ margin: 6px 0; }} .fd summary {{ cursor: pointer; font-weight: 600; }}
.fd pre.diff {{ background: #fafbfc; border: 1px solid #e3e5e8; padding: 8px; overflow-x: auto; line-height: 1.35; }}
.fd pre.diff span {{ display: block; white-space: pre; }}
.fd .add {{ background: #e6ffec; }} .fd .del {{ background: #ffebe9; }} .fd .hunk {{ color: #6f42c1; }}
.fd .hdr {{ color: #5b6470; font-weight: 600; }}
.fd .legend span {{ font-weight: 600; }} .fd .legend .a {{ color: {COLOR_A}; }} .fd .legend .b {{ color: {COLOR_B}; }}
.fd svg.dist {{ display: block; }}
.fd footer {{ margin-top: 28px; color: #5b6470; font-size: 12px; }}
"""
    + TRAFFIC_CSS
)


def _verdict_badge(verdict: str, reason: str = "") -> str:
    title = f' title="{_e(reason)}"' if reason else ""
    return f'<span class="v {_e(verdict)}"{title}>{_e(verdict)}</span>'


def _table(header: Sequence[str], rows: Iterable[str], cls: str = "") -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join(rows)
    return f'<div class="tw"><table class="fdt {cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _sides(document: Document) -> str:
    cards = []
    for i, (cls, label) in enumerate((("a", document.label_a), ("b", document.label_b))):
        rows = [(r.name, r.a if i == 0 else r.b) for r in document.sides] + [("GPU", document.gpus[i])]
        items = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in rows)
        cards.append(f'<div class="side {cls}"><h3>{_e(label)}</h3><dl>{items}</dl></div>')
    return f'<div class="sides">{"".join(cards)}</div>'


def _item(item: Item, result: DiffResult) -> str:
    """One finding: rank, title, role, rule, what it explains and its links, then its evidence (and
    the kernels against the two GPUs' peaks under the GPU's)."""
    links = "; ".join(
        f"{link.heading} " + ", ".join(f"#{rank} <code>{_e(rule)}</code>" for rank, rule in link.targets)
        for link in item.links
    )
    evidence = "".join(f"<li>{_e(line)}</li>" for line in item.evidence)
    peaks = speed_of_light_view.peaks_html(result) if item.peaks else ""
    return (
        f'<li><div><span class="rank">{item.rank}</span><strong>{_e(item.title)}</strong>'
        f'<span class="role {_e(item.role)}">{_e(item.role)}</span></div>'
        f'<div class="meta"><code>{_e(item.rule)}</code> · {_e(item.explains)}'
        f"{' · ' + links if links else ''}</div>"
        f'<ul class="evidence">{evidence}</ul>{peaks}</li>'
    )


def _findings(document: Document, result: DiffResult) -> str:
    """The three questions, each with its gate, ledger and ranked findings (its line is the answer's,
    at the top: written once)."""
    sections = []
    for section in document.sections:
        items = [_item(item, result) for item in section.items]
        sections.append(
            f"<h2>{_e(section.heading)} <small>({_e(section.gate)})</small></h2>"
            f'<p class="meta">Ledger: {_e(section.ledger)}</p>'
            + (f'<ol class="findings">{"".join(items)}</ol>' if items else "")
        )
    if document.no_finding:
        sections.append(f"<p>{_e(document.no_finding)}</p>")
    return "".join(sections)


def _parts(parts: Sequence[str]) -> str:
    """Launch parts that each stay on one line, so a narrow cell breaks between them."""
    return ", ".join(f"<span>{_e(p)}</span>" for p in parts)


def _launch(row: c.TimingRow) -> str:
    if row.launch_a == row.launch_b and row.parts_a:
        return f'<span class="launch">{_parts(row.parts_a)}</span>'
    if row.launch_a == row.launch_b or not (row.parts_a and row.parts_b):
        return (
            f'<span class="launch">{_e(row.launch_a)}</span>'
            if row.launch_a == row.launch_b
            else (
                f'<span class="launch"><div><i>A</i> {_e(row.launch_a)}</div><div><i>B</i> {_e(row.launch_b)}</div></span>'
            )
        )
    same_shape = len(row.parts_a) == len(row.parts_b)
    lines = []
    for side, parts, other in (("A", row.parts_a, row.parts_b), ("B", row.parts_b, row.parts_a)):
        marked = [
            f'<span class="chg">{_e(p)}</span>' if same_shape and p != other[i] else f"<span>{_e(p)}</span>"
            for i, p in enumerate(parts)
        ]
        lines.append(f"<div><i>{side}</i> {', '.join(marked)}</div>")
    return f'<span class="launch">{"".join(lines)}</span>'


def _timing_table(tables: Tables, report: DiffReport) -> str:
    rows = tables.timing
    if not rows:
        return ""
    shown = {(r.fusion, r.kernel) for r in rows}
    plots = {
        (fusion, kernel): strip_plot_svg(a, b, width=240)
        for fusion, kernel, a, b in c.samples_of(report)
        if (fusion, kernel) in shown
    }
    body = []
    column = c.timing_column(list(rows))
    kernel_rows: dict[str, int] = {}  # counted once: a count per row was quadratic in the fusions
    for x in rows:
        if x.kernel is not None:
            kernel_rows[x.fusion] = kernel_rows.get(x.fusion, 0) + 1
    for r in rows:
        t = r.timing
        cells = c.timing_cells(column, t)
        name = r.fusion if r.kernel is None else r.kernel
        note = f'<div class="meta">differs: {_e(r.note)}</div>' if r.note else ""
        # a fusion of one kernel has that kernel's samples: one plot is enough
        single = r.kernel is None and kernel_rows.get(r.fusion, 0) == 1
        plot = "" if single else plots.get((r.fusion, r.kernel), "")
        body.append(
            f'<tr class="{"fusion" if r.kernel is None else "kernel"}"><td>{_e(name)}</td>'
            + "".join(f'<td class="num">{_e(v)}</td>' for v in cells)
            + f"<td>{_verdict_badge(t.verdict, t.reason) if t else ''}</td><td>{plot}</td><td>{_launch(r)}{note}</td></tr>"
        )
    legend = (
        f'<p class="legend">Distributions: <span class="a">A</span> = {_e(report.result.label_a)}, '
        f'<span class="b">B</span> = {_e(report.result.label_b)}; each dot a sample, the box its interquartile '
        "range, the bar its median; each row has its own axis (hover a plot for its numbers, a verdict for its reason).</p>"
    )
    header = [*c.timing_header(column), "samples (us)", "launch, what else differs"]
    note = f'<p class="meta">{_e(tables.timing_left_out)}</p>' if tables.timing_left_out else ""
    return "<h2>Fusions and kernels</h2>" + legend + _table(header, body, "timings") + note


def _unmatched(report: DiffReport) -> str:
    result = report.result
    if not result.unmatched:
        return ""
    if result.b_replays_subset:
        names = ", ".join(traced_name(u.name, u.trace) for u in result.not_replayed)
        return (
            f"<h2>Not replayed by {result.replay_side}</h2>"
            f"<p>{len(result.not_replayed)} fusion(s) of {result.live_side}: {_e(names)}</p>"
        )
    column = c.Column.of(u.median_ns for u in result.unmatched)
    rows = [
        f'<tr><td>{_e(u.side)}</td><td>{_e(u.name)}</td><td>{_e(u.trace or "-")}</td><td class="num">{column.cell(u.median_ns)}</td><td>{_e(u.reason)}</td></tr>'
        for u in result.unmatched
    ]
    header = ["side", "fusion", "trace", column.header("median", brackets=True), "why"]
    return "<h2>Unmatched fusions</h2>" + _table(header, rows)


def _environments(document: Document, tables: Tables) -> str:
    rows = tables.environments
    body = [
        f'<tr class="{"differs" if r.differs else ""}"><td>{_e(r.name)}</td><td>{_e(r.a)}</td><td>{_e(r.b)}</td>'
        f"<td>{'≠' if r.differs else ''}</td></tr>"
        for r in rows
    ]
    differing = [r.name for r in rows if r.differs]
    header = ["", document.label_a, document.label_b, "differs"]
    table = _table(header, body, "env")
    if not differing:  # nothing to look at: folded, one click away
        return (
            "<h2>Environments and timing protocols</h2><details><summary>the same on both sides "
            f"({len(rows)} properties)</summary>{table}</details>"
        )
    return f"<h2>Environments and timing protocols</h2><p>Differ: {_e(', '.join(differing))}.</p>{table}"


def _properties(tables: Tables) -> str:
    rows = tables.properties
    if not rows:
        return ""
    shown = rows[: c.MAX_PROPERTY_ROWS]
    body = [
        f"<tr><td>{_e(r.where)}</td><td><code>{_e(r.path)}</code></td><td>{_e(r.a)}</td><td>{_e(r.b)}</td><td>{_e(r.category)}</td></tr>"
        for r in shown
    ]
    more = (
        f"<p>... {len(rows) - len(shown)} more in the diff record (<code>--format json</code>).</p>"
        if len(rows) > len(shown)
        else ""
    )
    return "<h2>Recorded differences</h2>" + _table(["where", "property", "A", "B", "category"], body) + more


def diff_lines_html(lines: Sequence[str]) -> str:
    """Unified diff lines as a coloured ``<pre>``."""
    spans = []
    for i, line in enumerate(lines):
        if i < 2 and line.startswith(("---", "+++")):
            cls = "hdr"
        elif line.startswith("@@"):
            cls = "hunk"
        elif line.startswith("+"):
            cls = "add"
        elif line.startswith("-"):
            cls = "del"
        else:
            cls = "ctx"
        spans.append(f'<span class="{cls}">{escape(printable_lines(line)) or " "}</span>')
    return f'<pre class="diff">{"".join(spans)}</pre>'


def _text_diffs(title: str, diffs: Sequence[c.TextDiff], what: str, missing: Sequence[str] = ()) -> str:
    if not diffs and not missing:
        return ""
    parts = [f"<h2>{_e(title)}</h2>"]
    for d in diffs:
        note = f'<p class="meta">{_e(d.note)}</p>' if d.note else ""
        parts.append(
            f"<details><summary>{_e(d.title)}: {_e(what)} diff (+{d.added} −{d.removed} lines)</summary>{note}{diff_lines_html(d.lines)}</details>"
        )
    if missing:
        parts.append(
            f"<p>The source differs (by hash) but was not captured for: {_e(', '.join(missing))}. Capture with "
            "<code>--cuda-source</code> on both sides to see the diff.</p>"
        )
    return "".join(parts)


def _warnings(document: Document) -> str:
    if not document.warnings:
        return ""
    return "<h2>Warnings</h2><ul>" + "".join(f"<li>{_e(w)}</li>" for w in document.warnings) + "</ul>"


_OUTCOME_CLASS = {"passes": "ok", "fails": "bad", "not measured": "unknown"}


def _answers(document: Document) -> str:
    """The answer, first on the page: each question's line, labelled and coloured by its outcome."""
    return (
        '<div class="answers">'
        + "".join(
            f'<div class="verdict {_OUTCOME_CLASS[a.outcome]}" data-question="{_e(a.question)}">'
            f"<strong>{_e(a.question)}:</strong> {_e(a.line)}</div>"
            for a in document.answers
        )
        + "</div>"
    )


def diff_html_fragment(report: DiffReport) -> str:
    """The report's body as an HTML fragment with its own ``<style>`` (what a notebook shows): the
    report document (:mod:`fusiondiff.report.views.document`) marked up, with the sections drawn
    from the captures (plots, block level, traffic, conditions, Thunder's figures, diffs)."""
    report = c.clean_report(report)
    result = report.result
    document = build_document(result, report, report.selection, tables=True)
    tables = document.tables
    assert tables is not None  # built with its tables
    sources, missing = c.source_diffs(report)
    return "".join(
        [
            f"<style>{CSS}</style>",
            '<div class="fd">',
            _answers(document),
            f'<p class="meta">{_e(document.selection)}</p>' if document.selection else "",
            f"<h1>fusiondiff: {_e(document.label_a)} vs {_e(document.label_b)}</h1>",
            _sides(document),
            _findings(document, result),
            _timing_table(tables, report),
            block_html(report),
            traffic_html(report),
            conditions_html(report),
            thunder_html(report),
            _unmatched(report),
            _environments(document, tables),
            _properties(tables),
            _text_diffs("Definitions", c.definition_diffs(report), "definition"),
            _text_diffs("CUDA source", sources, "CUDA source", missing),
            _warnings(document),
            f"<footer>{_e(document.footer)} This page loads nothing from the network.</footer>",
            "</div>",
        ]
    )


def render_html(report: DiffReport) -> str:
    """The whole self-contained HTML page."""
    result = report.result
    title = f"fusiondiff: {result.label_a} vs {result.label_b}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title></head>\n"
        f'<body class="fd fdpage"><main>{diff_html_fragment(report)}</main></body></html>\n'
    )


def capture_html(capture: Capture, path: str | None = None) -> str:
    """One capture as an HTML fragment: where and how it was recorded, then each fusion with its
    kernels, launch configurations and sample distribution (what a notebook shows)."""
    env, proto = capture.environment, capture.protocol
    traffic = capture_view(capture)
    head = [
        ("file", path or "-"),
        ("kind", capture.kind),
        ("what ran", c.short_list(c.scrubbed(capture.source)) or "-"),
        ("recorded at", env.recorded_at or "-"),
        (
            "GPU",
            f"{env.gpu_name or '?'} ({env.sm_count or '?'} SMs), driver {env.driver_version or '?'}, CUDA {env.cuda_version or '?'}",
        ),
        (
            "versions",
            f"torch {env.torch_version or '?'}, nvFuser {env.nvfuser_version or '?'}, Thunder {env.thunder_version or '?'}",
        ),
        ("protocol", f"{proto.method}, {proto.warmup} warm-up, {proto.samples} samples, L2 {proto.l2_mode}"),
        ("DRAM bandwidth", traffic.peak),
    ]
    items = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in head)
    rows = []
    column = c.Column.of(t.median_ns for f in capture.fusions for t in (f.timing, *(k.timing for k in f.kernels)))
    for i, f in enumerate(capture.fusions):
        name = traced_name(f.name, f.trace)
        inputs = "; ".join(c.input_text(t) for t in f.inputs)
        rows.append(
            f'<tr class="fusion"><td>{_e(name)}</td><td class="num">{column.cell(f.timing.median_ns)}</td><td class="num">{column.cell(f.timing.iqr_ns)}</td>'
            f"{html_cells(traffic, i, None)}"
            f'<td>{strip_plot_svg(f.timing.samples_ns, (), label_a="")}</td><td class="launch">{_e(inputs)}</td></tr>'
        )
        for k in f.kernels:
            rows.append(
                f'<tr class="kernel"><td>{_e(k.normalized_name)}</td><td class="num">{column.cell(k.timing.median_ns)}</td>'
                f'<td class="num">{column.cell(k.timing.iqr_ns)}</td>{html_cells(traffic, i, k.order)}'
                f'<td></td><td class="launch">{_e(c.launch_text(k.launch))}</td></tr>'
            )
    header = [
        "fusion / kernel",
        column.header("median", brackets=True),
        column.header("IQR", brackets=True),
        *HTML_HEADER,
        "samples (us)",
        "inputs / launch",
    ]
    table = _table(header, rows, "timings")
    warnings = "".join(f"<li>{_e(w)}</li>" for w in c.capture_warnings(capture))
    return (
        f'<style>{CSS}</style><div class="fd"><h1>{_e(capture.kind)} capture: {len(capture.fusions)} fusion(s)</h1>'
        f'<div class="side a"><dl>{items}</dl></div>{html_ranked(traffic)}{table}{html_notes(traffic)}'
        + (f"<h2>Warnings</h2><ul>{warnings}</ul>" if warnings else "")
        + "</div>"
    )


class HtmlRenderer(Renderer):
    name = "html"

    def render(self, report: DiffReport) -> str:
        return render_html(report)
