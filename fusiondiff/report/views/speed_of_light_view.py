"""Each kernel against the two GPUs' measured DRAM peaks, in words and tables: the lines of the GPU's
finding that come from the peaks (:func:`evidence_lines`, called by
:mod:`~fusiondiff.report.words.setup_words`), and the table under that finding in the text, Markdown and
HTML reports (:func:`peaks_text`, :func:`peaks_markdown`, :func:`peaks_html`), from
``DiffResult.against_peaks`` (:mod:`fusiondiff.diff.speed_of_light` computes both). Percentages,
GB/s and times are chosen here; the records hold fractions, GB/s and ns.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from fusiondiff.diff.records import DiffResult, Evidence, KernelAgainstPeaks
from fusiondiff.diff.speed_of_light import row_label
from fusiondiff.records.units import TOO_LARGE, Column, durations
from fusiondiff.report.formats.html_parts import escaped, number_table
from fusiondiff.report.words.shown import by_field, show

MAX_ROWS = 20
"""Rows of the table: past it, those beyond their floor, then the longest on A; the JSON record
(``against_peaks``) holds every one."""

_WHY_MISSING = {
    "recorded_before": "recorded before fusiondiff measured it",
    "not_measured": "not measured (--no-peak, or no room on the GPU for the copy: its warnings say which)",
}
HEADER = ("fusion / kernel", "A", "B", "B predicted", "residual", "floor", "of peak A", "of peak B")
NOTE = (
    "B predicted: A's time x A's peak / B's peak (x B's bytes / A's, where they differ), what a memory-bound "
    "kernel takes on B; residual: B / B predicted - 1 (above 0: B leaves more of its peak on the table); "
    "floor: what the two medians' 99 % intervals, the peaks' spread (median against best copy) and the "
    "differ's noise floor allow; * beyond it; of peak: the bytes it must move over its time, over the side's peak"
)


def _percent(fraction: float | None) -> str:
    return "-" if fraction is None or math.isnan(fraction) else f"{100 * fraction:.0f} %"


def _gbs(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} GB/s"


def _missing_line(e: Evidence) -> str:
    """One line: which side has no measured peak, and why."""
    reasons = {side: _WHY_MISSING.get(str(value), str(value)) for side, value in (("A", e.a), ("B", e.b)) if value}
    if len(set(reasons.values())) == 1:
        return f"no measured peak on {' or '.join(reasons)}: {next(iter(reasons.values()))}"
    return "; ".join(f"no measured peak on {side}: {why}" for side, why in reasons.items())


def _kernel_line(subject: str, e: dict[str, Evidence]) -> str:
    percent, time, floor = e["percent_of_peak"], e["kernel_time_ns"], e["peak_noise_floor"]
    a, b = percent.on("A") or math.nan, percent.on("B") or math.nan
    # the same bytes on both sides: the residual is the share of peak's change
    residual = a / b - 1 if b > 0 else math.nan
    predicted = (time.on("B") or math.nan) / (1 + residual)
    shown_b, shown_predicted = durations(time.on("B") or math.nan, predicted)
    worse = "B" if residual > 0 else "A"
    return (
        f"{subject} runs at {_percent(a)} of peak on A and {_percent(b)} on B: {worse} leaves more on the table "
        f"({shown_b} on B, the peaks predict {shown_predicted}: {100 * residual:+.0f} %, beyond its noise floor of "
        f"{100 * (floor.on('A') or 0.0):.0f} %)"
    )


def evidence_lines(data: Sequence[Evidence]) -> list[str]:
    """The GPU's evidence from the peaks (:func:`fusiondiff.diff.speed_of_light.peak_evidence`), in words."""
    e = by_field([x for x in data if x.subject is None])
    if "peak_missing" in e:
        return [_missing_line(e["peak_missing"])]
    lines = []
    peak, best = e.get("peak_gbs"), e.get("peak_best_gbs")
    if peak is not None:
        a, b = peak.on("A"), peak.on("B")
        times = f": a memory-bound kernel takes {a / b:.2f}x as long on B" if a and b else ""
        best_text = f" (best copy {_gbs(best.on('A'))} and {_gbs(best.on('B'))})" if best is not None else ""
        lines.append(f"measured DRAM peak: {_gbs(a)} on A, {_gbs(b)} on B{best_text}{times}")
    judged, off = e.get("kernels_against_peaks"), e.get("kernels_off_peaks")
    if judged is not None and off is not None:
        n, m = show(judged.a), show(off.a)
        if off.a:
            lines.append(f"{m} of {n} kernel(s) judged against the peaks run off the prediction beyond the noise:")
        else:
            lines.append(f"every kernel judged against the peaks ({n}) runs as the peaks predict, within the noise")
    subjects = list(dict.fromkeys(x.subject for x in data if x.subject is not None))
    for subject in subjects:
        lines.append(_kernel_line(subject, by_field([x for x in data if x.subject == subject])))
    if off is not None and isinstance(off.a, int) and off.a > len(subjects):
        lines.append(f"... and {off.a - len(subjects)} more (the table below; the JSON record's against_peaks)")
    return lines


def _pairs_rows(result: DiffResult) -> list[KernelAgainstPeaks]:
    """The rows of the report's pairs (a narrowed report keeps its own), in the pairs' order."""
    labels = {p.label for p in result.pairs}
    return [r for r in result.against_peaks if r.fusion in labels]


def shown_rows(result: DiffResult, limit: int = MAX_ROWS) -> list[KernelAgainstPeaks]:
    """The rows of the report's pairs, in the pairs' order: all of them up to ``limit``; past it,
    those beyond their floor, then the longest on A."""
    rows = _pairs_rows(result)
    if len(rows) <= limit:
        return rows
    ranked = sorted(range(len(rows)), key=lambda i: (not rows[i].beyond_floor, -rows[i].time_a_ns))
    kept = set(ranked[:limit])
    return [r for i, r in enumerate(rows) if i in kept]


def _signed(fraction: float) -> str:
    if math.isnan(fraction):
        return "-"
    if not math.isfinite(100 * fraction):  # a record's residual past any printing
        return TOO_LARGE
    percent = round(100 * fraction)
    return "0 %" if percent == 0 else f"{percent:+d} %"


def byte_notes(rows: Sequence[KernelAgainstPeaks]) -> list[str]:
    """What the rows' byte counts approximate, each note once with the rows it concerns (it moves
    the shares of peak, not the residual: the same count stands on both sides)."""
    counts: dict[str, int] = {}
    for r in rows:
        for note in r.notes:
            counts[note] = counts.get(note, 0) + 1
    return [f"bytes: {note} ({n} of {len(rows)} rows)" for note, n in counts.items()]


def _cells(rows: Sequence[KernelAgainstPeaks]) -> list[tuple[str, ...]]:
    column = Column.of([t for r in rows for t in (r.time_a_ns, r.time_b_ns, r.predicted_b_ns)])
    return [
        (
            row_label(r),
            f"{column.cell(r.time_a_ns)} {column.unit}",
            f"{column.cell(r.time_b_ns)} {column.unit}",
            f"{column.cell(r.predicted_b_ns)} {column.unit}",
            f"{_signed(r.residual)}{' *' if r.beyond_floor else ''}",
            _percent(r.floor),
            f"{r.percent_a:.0f} %",
            f"{r.percent_b:.0f} %",
        )
        for r in rows
    ]


def _title(result: DiffResult, shown: int) -> str:
    rows = _pairs_rows(result)
    first = rows[0]
    more = f", {shown} of {len(rows)} shown (the JSON record has all)" if shown < len(rows) else ""
    return (
        f"each kernel against the measured peaks ({_gbs(first.peak_a_gbs)} on A, {_gbs(first.peak_b_gbs)} on B){more}"
    )


def peaks_text(result: DiffResult, width: int | None = None, indent: str = "     ") -> list[str]:
    """The table under the GPU's finding in the terminal summary (nothing without rows)."""
    from fusiondiff.report.layout import table

    rows = shown_rows(result)
    if not rows:
        return []
    inner = None if width is None else max(width - len(indent), 40)
    lines = [_title(result, len(rows)), *table(HEADER, _cells(rows), inner, keys=1), f"  {NOTE}"]
    lines += [f"  {note}" for note in byte_notes(rows)]
    return [indent + line for line in lines]


def peaks_markdown(result: DiffResult, indent: str = "   ") -> list[str]:
    """The table under the GPU's finding in the Markdown report, indented into its list item."""
    from fusiondiff.report.formats.md_text import inline, table

    rows = shown_rows(result)
    if not rows:
        return []
    body = table(HEADER, _cells(rows), "lrrrrrrr")
    notes = [f"{indent}{inline(line)}  " for line in (NOTE, *byte_notes(rows))]
    return ["", indent + inline(_title(result, len(rows))) + ":", "", *(indent + line for line in body), "", *notes]


def peaks_html(result: DiffResult) -> str:
    """The table under the GPU's finding in the HTML report (empty without rows)."""
    rows = shown_rows(result)
    if not rows:
        return ""
    return (
        f'<p class="meta">{escaped(_title(result, len(rows)))}</p>'
        + number_table(HEADER, _cells(rows))
        + "".join(f'<p class="meta">{escaped(line)}</p>' for line in (NOTE, *byte_notes(rows)))
    )
