"""The block level in the HTML report: the table of :mod:`fusiondiff.report.blocks`, and per kernel
measured on a side, two plots drawn from its CTA arrays (inline SVG, like :mod:`.plots`):

- **SM occupancy over time**, one heat strip per side on one time axis: a row per SM, its colour
  the number of CTAs the SM ran at that moment (time in bins; a CTA counts for the part of a bin it
  covers), so waves, a tail and SMs that start late or stay idle show as shapes;
- **CTA durations**, both sides' distributions as histograms on one axis (share of CTAs per bin).

Each plot is of one run (:func:`fusiondiff.report.blocks.shown_run`: where the runs used different
numbers of SMs, the one that used fewest; else the one with the median span). Hand-written SVG: no plotting package, nothing loaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

import numpy as np
import numpy.typing as npt

from fusiondiff.report.blocks import HEADER, NOTE, block_rows, cells, shown_run
from fusiondiff.report.interface import DiffReport
from fusiondiff.report.plots import COLOR_A, COLOR_B, nice_ticks

BINS = 160
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
    adds the share of each bin it covers (shape ``[sms, bins]``)."""
    width = span / bins
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


def occupancy_svg(strips: Sequence[tuple[str, str, npt.NDArray[np.float64]]], span_ns: float, width: int = 760) -> str:
    """Heat strips (label, colour, occupancy ``[sms, bins]``) stacked on one time axis."""
    left, right, top, row_h = 34, 12, 6, 2
    sms = max(o.shape[0] for _, _, o in strips)
    strip_h = sms * row_h
    height = top + len(strips) * (strip_h + 18) + 36
    most = max(1.0, max(float(o.max()) for _, _, o in strips))
    levels = len(PALETTE) - 1
    parts = [
        f'<svg class="occ" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="CTAs at once per SM over time">'
    ]
    inner = width - left - right
    for i, (label, color, occ) in enumerate(strips):
        y0 = top + i * (strip_h + 18) + 12
        parts.append(
            f'<text x="2" y="{y0 - 3}" font-size="10" fill="{color}" font-weight="bold">{escape(label)}</text>'
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
        parts.append(f'<text x="{left - 4}" y="{y0 + 8}" font-size="8" fill="#555" text-anchor="end">SM 0</text>')
        parts.append(
            f'<text x="{left - 4}" y="{y0 + strip_h}" font-size="8" fill="#555" text-anchor="end">{sms - 1}</text>'
        )
    axis = top + len(strips) * (strip_h + 18) + 2
    for tick in nice_ticks(0.0, span_ns / 1000):
        x = left + tick * 1000 / span_ns * inner
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{axis}" y2="{axis + 3}" stroke="#999"/>')
        parts.append(
            f'<text x="{x:.1f}" y="{axis + 13}" font-size="9" fill="#555" text-anchor="middle">{tick:g}</text>'
        )
    legend_y = axis + 22
    parts.append(
        f'<text x="{left}" y="{legend_y + 8}" font-size="9" fill="#555">us from the first CTA start; CTAs at once on an SM:</text>'
    )
    for i, color in enumerate(PALETTE):
        x = left + 250 + i * 34
        parts.append(
            f'<rect x="{x}" y="{legend_y}" width="12" height="9" fill="{color}" stroke="#ccc" stroke-width="0.5"/>'
        )
        upto = 0.0 if i == 0 else most * i / levels
        parts.append(
            f'<text x="{x + 14}" y="{legend_y + 8}" font-size="8" fill="#555">{"0" if i == 0 else f"≤{upto:.3g}"}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def histogram_svg(sides: Sequence[tuple[str, str, npt.NDArray[np.float64]]], width: int = 360, bins: int = 40) -> str:
    """CTA durations (us) of each side (label, colour, durations) as histograms on one axis."""
    values = np.concatenate([d for _, _, d in sides])
    lo, hi = float(values.min()), float(values.max())
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    edges = np.linspace(lo, hi, bins + 1)
    shares = [np.histogram(d, edges)[0] / max(d.size, 1) for _, _, d in sides]
    top_share = max(float(s.max()) for s in shares)
    left, right, top, plot_h = 8, 8, 8, 90
    height = top + plot_h + 30
    inner = width - left - right
    parts = [
        f'<svg class="hist" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="CTA durations in us">'
    ]
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


def block_html(report: DiffReport) -> str:
    """The block-level section of the HTML report (empty when nothing was recorded)."""
    rows = list(block_rows(report))
    if not rows:
        return ""
    head = "".join(f"<th>{escape(h)}</th>" for h in HEADER)
    body = "".join(
        f"<tr><td>{escape(r.fusion + ' / ' + r.kernel) if r.side == 'A' else ''}</td><td>{r.side}</td>"
        + "".join(f'<td class="num">{escape(v)}</td>' for v in cells(r.timeline, r.probe))
        + "</tr>"
        for r in rows
    )
    parts = [
        "<h2>Block level, measured per CTA</h2>",
        f'<p class="meta">{escape(NOTE)}</p>',
        f'<table class="fdt"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>',
    ]
    labels = {"A": report.result.label_a, "B": report.result.label_b}
    for pair in report.result.pairs:
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
                parts.append(_kernel_plots(f"{pair.label} / {kernel.normalized_name}", found, labels))
    return "".join(parts)


def _kernel_plots(title: str, found: Sequence[tuple[str, Any]], labels: dict[str, str]) -> str:
    colors = {"A": COLOR_A, "B": COLOR_B}
    runs = [(side, arrays, shown_run(arrays)) for side, arrays in found]
    span = float(max(int(arrays.end_ns[run].max()) for _, arrays, run in runs))
    sms = max(int(arrays.sm[run].max()) + 1 for _, arrays, run in runs)
    strips = [
        (
            f"{side}: {labels[side]} (run {r + 1} of {a.runs})",
            colors[side],
            occupancy(a.start_ns[r], a.end_ns[r], a.sm[r], sms, span),
        )
        for side, a, r in runs
    ]
    durations = [(side, colors[side], (a.end_ns[r] - a.start_ns[r]).astype(np.float64) / 1000) for side, a, r in runs]
    missing = "" if len(runs) == 2 else f'<p class="meta">only {runs[0][0]} was measured for this kernel</p>'
    return (
        f"<details open><summary>{escape(title)}</summary>{missing}"
        '<div class="sides" style="grid-template-columns: auto auto; align-items: start">'
        f"<div>{occupancy_svg(strips, span)}</div><div>{histogram_svg(durations)}</div></div></details>"
    )
