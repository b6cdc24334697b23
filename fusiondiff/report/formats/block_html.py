"""The block level in the HTML report: the table of :mod:`fusiondiff.report.views.block_view`, and per kernel
measured on a side, two plots drawn from its CTA arrays (inline SVG, like :mod:`.plots`):

- **SM occupancy over time**, one heat strip per side on one time axis: a row per SM, its colour
  the number of CTAs the SM ran at that moment (time in bins; a CTA counts for the part of a bin it
  covers), so waves, a tail and SMs that start late or stay idle show as shapes;
- **CTA durations**, both sides' distributions as histograms on one axis (share of CTAs per bin).

Each plot is of one run (:func:`fusiondiff.report.views.block_view.shown_run`: where the runs used different
numbers of SMs, the one that used fewest; else the one with the median span). Hand-written SVG: no plotting package, nothing loaded.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

import numpy as np
import numpy.typing as npt

from fusiondiff.records.limits import BLOCK_BINS, BLOCK_CELLS
from fusiondiff.report.formats.plots import COLOR_A, COLOR_B, nice_ticks
from fusiondiff.report.interface import DiffReport
from fusiondiff.report.views.block_view import HEADER, NOTE, block_rows, cells, shown_run

BINS = BLOCK_BINS
"""Time bins of an occupancy strip."""
PALETTE = ("#f3f4f6", "#d6e4f0", "#a9c7e2", "#74a6d1", "#4583bd", "#1f5fa8", "#123f78", "#0a2450")
"""Colours by CTAs at once: none, then darker for more (the last for as many or more)."""


def occupancy(
    start: npt.NDArray[np.int64],
    end: npt.NDArray[np.int64],
    sm: npt.NDArray[np.int64],
    sms: int,
    span: float,
    bins: int = BINS,
) -> npt.NDArray[np.float64]:
    """CTAs running on each SM in each of ``bins`` equal time bins over ``[0, span)``: each CTA
    adds the share of each bin it covers (shape ``[sms, bins]``). A span of 0 (every CTA started
    and ended at once) is drawn over 1 ns."""
    width = (span if math.isfinite(span) and span > 0 else 1.0) / bins
    grid = np.zeros((sms, bins + 1), dtype=np.float64)
    s = np.clip(start / width, 0, bins)
    e = np.clip(end / width, 0, bins)
    first, last = np.floor(s).astype(np.int64), np.floor(e).astype(np.int64)
    same = first == last
    # a CTA within one bin: the share it covers; otherwise its partial first and last bins, and
    # every bin between fully (through a running sum of +1/-1 marks)
    np.add.at(grid, (sm[same], first[same]), (e - s)[same])
    cross = ~same
    np.add.at(grid, (sm[cross], first[cross]), (first + 1 - s)[cross])
    np.add.at(grid, (sm[cross], last[cross]), (e - last)[cross])
    marks = np.zeros((sms, bins + 2), dtype=np.float64)
    np.add.at(marks, (sm[cross], first[cross] + 1), 1.0)
    np.add.at(marks, (sm[cross], last[cross]), -1.0)
    return (grid + np.cumsum(marks, axis=1)[:, : bins + 1])[:, :bins]


@dataclass(frozen=True)
class Strip:
    """One side's run of one kernel, drawn as a row per SM."""

    label: str
    color: str
    occupancy: npt.NDArray[np.float64]
    """CTAs at once per SM and time bin (:func:`occupancy`)."""
    waves_ns: tuple[float, ...] = ()
    """When each wave after the first started on the busiest SM (its CTAs in start order, a wave
    every ``ctas_at_once`` of them)."""
    tail_ns: tuple[float, float] | None = None
    """The tail: from the end by which 90 % of CTAs had ended to the last end."""


def run_marks(
    start: npt.NDArray[np.int64], end: npt.NDArray[np.int64], sm: npt.NDArray[np.int64]
) -> tuple[tuple[float, ...], tuple[float, float]]:
    """The wave starts and the tail of one run, as :func:`fusiondiff.records.block_stats.run_stats` counts
    them (times from the run's first CTA start)."""
    from fusiondiff.records.block_stats import run_stats

    stats = run_stats(start, end, sm)
    origin = int(start.min())
    busiest = int(np.argmax(np.bincount(sm)))
    starts = np.sort(start[sm == busiest] - origin)
    per_wave = max(stats.ctas_at_once, 1)
    waves = tuple(float(starts[i]) for i in range(per_wave, starts.size, per_wave))
    return waves, (stats.span_ns - stats.tail_ns, stats.span_ns)


def occupancy_svg(strips: Sequence[Strip], span_ns: float, width: int = 1000) -> str:
    """Per-SM timelines: each strip (a side of a kernel, A above B) a row per SM coloured by the
    CTAs it ran at once, its waves and tail marked; all on one time axis, drawn once below."""
    left, right, top, gap = 40, 12, 6, 22
    sms = max(s.occupancy.shape[0] for s in strips)
    row_h = 2 if sms <= 200 else 1
    strip_h = sms * row_h
    height = top + len(strips) * (strip_h + gap) + 36
    most = max(1.0, max(float(s.occupancy.max()) for s in strips))
    levels = len(PALETTE) - 1
    parts = [
        f'<svg class="occ" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'style="max-width:100%;height:auto" role="img" aria-label="CTAs at once per SM over time">'
    ]
    inner = width - left - right

    def x_of(ns: float) -> float:
        return left + ns / span_ns * inner

    for i, strip in enumerate(strips):
        occ = strip.occupancy
        y0 = top + i * (strip_h + gap) + 14
        parts.append(
            f'<text x="2" y="{y0 - 4}" font-size="11" fill="{strip.color}" font-weight="bold">{escape(strip.label)}</text>'
        )
        bins = occ.shape[1]
        level = np.minimum(np.ceil(occ / most * levels - 1e-9), levels).astype(int)
        for row in range(occ.shape[0]):
            col = 0
            while col < bins:
                value = level[row, col]
                end = col + 1
                while end < bins and level[row, end] == value:
                    end += 1
                if value:
                    x = left + col * inner / bins
                    parts.append(
                        f'<rect x="{x:.1f}" y="{y0 + row * row_h}" width="{(end - col) * inner / bins:.1f}" height="{row_h}" fill="{PALETTE[value]}"/>'
                    )
                col = end
        parts.append(
            f'<rect x="{left}" y="{y0}" width="{inner}" height="{strip_h}" fill="none" stroke="#bbb" stroke-width="0.5"/>'
        )
        if strip.tail_ns is not None:
            t0, t1 = (x_of(t) for t in strip.tail_ns)
            parts.append(
                f'<rect class="tail" x="{t0:.1f}" y="{y0}" width="{max(t1 - t0, 1):.1f}" height="{strip_h}" '
                'fill="#b3261e" fill-opacity="0.12" stroke="#b3261e" stroke-width="0.8"><title>tail: the last 10 % of CTAs</title></rect>'
            )
            parts.append(f'<text x="{t1:.1f}" y="{y0 - 4}" font-size="9" fill="#b3261e" text-anchor="end">tail</text>')
        for n, wave in enumerate(strip.waves_ns, start=2):
            x = x_of(wave)
            parts.append(
                f'<line class="wave" x1="{x:.1f}" x2="{x:.1f}" y1="{y0}" y2="{y0 + strip_h}" stroke="#333" '
                f'stroke-width="0.7" stroke-dasharray="3,3"><title>wave {n} starts on the busiest SM</title></line>'
            )
            parts.append(f'<text x="{x + 2:.1f}" y="{y0 + 9}" font-size="8" fill="#333">w{n}</text>')
        parts.append(f'<text x="{left - 4}" y="{y0 + 8}" font-size="8" fill="#555" text-anchor="end">SM 0</text>')
        parts.append(
            f'<text x="{left - 4}" y="{y0 + strip_h}" font-size="8" fill="#555" text-anchor="end">{occ.shape[0] - 1}</text>'
        )
    axis = top + len(strips) * (strip_h + gap) + 2
    parts.append(f'<line x1="{left}" x2="{left + inner}" y1="{axis}" y2="{axis}" stroke="#999"/>')
    for tick in nice_ticks(0.0, span_ns / 1000):
        x = x_of(tick * 1000)
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{axis}" y2="{axis + 3}" stroke="#999"/>')
        parts.append(
            f'<text x="{x:.1f}" y="{axis + 13}" font-size="9" fill="#555" text-anchor="middle">{tick:g}</text>'
        )
    legend_y = axis + 22
    parts.append(
        f'<text x="{left}" y="{legend_y + 8}" font-size="9" fill="#555">us from each kernel\'s first CTA start; '
        "w2...: waves on the busiest SM; CTAs at once on an SM:</text>"
    )
    for i, color in enumerate(PALETTE):
        x = left + 420 + i * 40
        parts.append(
            f'<rect x="{x}" y="{legend_y}" width="12" height="9" fill="{color}" stroke="#ccc" stroke-width="0.5"/>'
        )
        upto = 0.0 if i == 0 else most * i / levels
        parts.append(
            f'<text x="{x + 14}" y="{legend_y + 8}" font-size="8" fill="#555">{"0" if i == 0 else f"≤{upto:.3g}"}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def histogram_svg(
    sides: Sequence[tuple[str, str, npt.NDArray[np.float64]]],
    width: int = 360,
    bins: int = 40,
    limits: tuple[float, float] | None = None,
    title: str = "",
) -> str:
    """CTA durations (us) of each side (label, colour, durations) as histograms on one axis
    (``limits``: the fusion's, shared by its kernels' plots)."""
    values = np.concatenate([d for _, _, d in sides])
    lo, hi = limits if limits is not None else (float(values.min()), float(values.max()))
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    edges = np.linspace(lo, hi, bins + 1)
    shares = [np.histogram(d, edges)[0] / max(d.size, 1) for _, _, d in sides]
    top_share = max(float(s.max()) for s in shares)
    left, right, top, plot_h = 8, 8, 8, 90
    height = top + plot_h + 30
    inner = width - left - right
    parts = [
        f'<svg class="hist" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'style="max-width:100%;height:auto" role="img" aria-label="CTA durations in us">'
    ]
    if title:
        parts.append(f'<text x="{left}" y="{top + 2}" font-size="9" fill="#555">{escape(title)}</text>')
    for (label, color, durations), share in zip(sides, shares):
        points = []
        for i, value in enumerate(share):
            x0, x1 = left + i * inner / bins, left + (i + 1) * inner / bins
            y = top + plot_h - value / top_share * plot_h
            points += [f"{x0:.1f},{y:.1f}", f"{x1:.1f},{y:.1f}"]
        median = float(np.median(durations))
        title = (
            f"{label}: {durations.size} CTAs, median {median:.2f} us, p99 {float(np.percentile(durations, 99)):.2f} us"
        )
        parts.append(
            f'<g><title>{escape(title)}</title><polyline points="{" ".join(points)}" fill="none" stroke="{color}" stroke-width="1.6"/>'
        )
        mx = left + (median - lo) / (hi - lo) * inner
        parts.append(
            f'<line x1="{mx:.1f}" x2="{mx:.1f}" y1="{top}" y2="{top + plot_h}" stroke="{color}" stroke-dasharray="3,2"/></g>'
        )
    axis = top + plot_h
    parts.append(f'<line x1="{left}" x2="{width - right}" y1="{axis}" y2="{axis}" stroke="#999"/>')
    for tick in nice_ticks(lo, hi):
        x = left + (tick - lo) / (hi - lo) * inner
        parts.append(
            f'<text x="{x:.1f}" y="{axis + 12}" font-size="9" fill="#555" text-anchor="middle">{tick:g}</text>'
        )
    parts.append(
        f'<text x="{width - right}" y="{axis + 24}" font-size="9" fill="#555" text-anchor="end">CTA duration, us (dashed: median)</text></svg>'
    )
    return "".join(parts)


def _table_rows(report: DiffReport) -> str:
    """The table's rows: a side with cells, or a refusal in one cell across the row; a kernel both
    sides refused for the same reason is one row."""
    rows = list(block_rows(report))
    span = len(HEADER) - 2
    out = []
    for i in range(0, len(rows), 2):
        a, b = rows[i], rows[i + 1]
        name = f"<td>{escape(a.fusion + ' / ' + a.kernel)}</td>"
        why_a, why_b = cells(a.timeline, a.probe)[0], cells(b.timeline, b.probe)[0]
        if _refused(a) and _refused(b) and why_a == why_b:
            out.append(f'<tr class="refused">{name}<td>both</td><td colspan="{span}">{escape(why_a)}</td></tr>')
            continue
        for r, first in ((a, name), (b, "<td></td>")):
            if _refused(r):
                why = escape(cells(r.timeline, r.probe)[0])
                out.append(f'<tr class="refused">{first}<td>{r.side}</td><td colspan="{span}">{why}</td></tr>')
            else:
                values = "".join(f'<td class="num">{escape(v)}</td>' for v in cells(r.timeline, r.probe))
                out.append(f"<tr>{first}<td>{r.side}</td>{values}</tr>")
    return "".join(out)


def _refused(row: Any) -> bool:
    return row.timeline is None or row.timeline.refusal is not None


def block_html(report: DiffReport) -> str:
    """The block-level section of the HTML report (empty when nothing was recorded): the table in a
    box of its own that scrolls sideways, then per fusion its kernels' per-SM timelines (A above B)
    on one time axis, its refused kernels one line each, and its CTA-duration histograms. The
    pictures together draw at most :data:`~fusiondiff.records.limits.BLOCK_CELLS` cells (SMs x
    time bins); a fusion past that is listed with the table's figures only, and says so."""
    if not any(True for _ in block_rows(report)):
        return ""
    head = "".join(f"<th>{escape(h)}</th>" for h in HEADER)
    parts = [
        "<h2>Block level, measured per CTA</h2>",
        f'<p class="meta">{escape(NOTE)}</p>',
        f'<div class="tw"><table class="fdt blocks"><thead><tr>{head}</tr></thead><tbody>{_table_rows(report)}</tbody></table></div>',
    ]
    labels = {"A": report.result.label_a, "B": report.result.label_b}
    refusals: dict[str, list[str]] = {}
    for r in block_rows(report):
        if _refused(r) and r.timeline is not None:
            refusals.setdefault(f"{r.fusion}\x00{r.kernel}", []).append(f"{r.side}: {cells(r.timeline)[0]}")
    budget = [BLOCK_CELLS]
    for pair in report.result.pairs:
        kernels = []
        for kernel in pair.kernels:
            found = [
                (side, arrays[key])
                for side, arrays, key in (
                    ("A", report.arrays_a, (pair.index_a, kernel.order_a)),
                    ("B", report.arrays_b, (pair.index_b, kernel.order_b)),
                )
                if key in arrays
            ]
            if found:
                kernels.append((kernel.normalized_name, found))
        refused = [
            f"{kernel.normalized_name}: " + "; ".join(refusals[key])
            for kernel in pair.kernels
            if (key := f"{pair.label}\x00{kernel.normalized_name}") in refusals
        ]
        if kernels or refused:
            parts.append(_fusion_plots(pair.label, kernels, refused, labels, budget))
    return "".join(parts)


def _fusion_plots(
    title: str,
    kernels: Sequence[tuple[str, Sequence[tuple[str, Any]]]],
    refused: Sequence[str],
    labels: dict[str, str],
    budget: list[int],
) -> str:
    """One fusion's plots: every measured kernel's sides as per-SM strips on one time axis, its
    refused kernels one line each, its kernels' CTA durations on one duration axis; only a line
    saying so where its strips would pass what is left of the page's ``budget`` of cells."""
    colors = {"A": COLOR_A, "B": COLOR_B}
    lines = "".join(f'<p class="meta refused">refused: {escape(line)}</p>' for line in refused)
    if not kernels:
        return f"<details open><summary>{escape(title)}</summary>{lines}</details>"
    runs = [(name, side, a, shown_run(a)) for name, found in kernels for side, a in found]
    # every CTA starting and ending at once spans nothing: drawn over 1 ns
    span = max(1.0, float(max(int(a.end_ns[r].max() - a.start_ns[r].min()) for _, _, a, r in runs)))
    sms = max(int(a.sm[r].max()) + 1 for _, _, a, r in runs)
    cells_needed = len(runs) * sms * BINS
    if cells_needed > budget[0]:
        note = (
            f"{len(runs)} per-SM picture(s) of {sms} SMs not drawn: the page draws at most {BLOCK_CELLS} cells "
            "(SMs x time bins) of them; the table above has their figures"
        )
        return f'<details open><summary>{escape(title)}</summary>{lines}<p class="meta">{escape(note)}</p></details>'
    budget[0] -= cells_needed
    strips = []
    for name, side, a, r in runs:
        start = a.start_ns[r] - a.start_ns[r].min()
        end = a.end_ns[r] - a.start_ns[r].min()
        waves, tail = run_marks(a.start_ns[r], a.end_ns[r], a.sm[r])
        label = (
            f"{name}, {side}: {labels[side]} (run {r + 1} of {a.runs})"
            if len(kernels) > 1
            else (f"{side}: {labels[side]} (run {r + 1} of {a.runs})")
        )
        strips.append(Strip(label, colors[side], occupancy(start, end, a.sm[r], sms, span), waves, tail))
    missing = "".join(
        f'<p class="meta">{escape(name)}: only {found[0][0]} was measured</p>'
        for name, found in kernels
        if len(found) < 2
    )
    durations = {
        name: [
            (side, colors[side], (a.end_ns[r] - a.start_ns[r]).astype(np.float64) / 1000)
            for n, side, a, r in runs
            if n == name
        ]
        for name, _ in kernels
    }
    every = np.concatenate([d for sides in durations.values() for _, _, d in sides])
    limits = (float(every.min()), float(every.max())) if float(every.max() - every.min()) >= 1e-9 else None
    hists = "".join(
        f"<div>{histogram_svg(sides, limits=limits, title=name if len(kernels) > 1 else '')}</div>"
        for name, sides in durations.items()
    )
    return (
        f"<details open><summary>{escape(title)}</summary>{missing}{lines}"
        f'<div class="plot">{occupancy_svg(strips, span)}</div>'
        f'<div class="hists" style="display:flex;flex-wrap:wrap;gap:12px">{hists}</div></details>'
    )
