"""Sample distributions as small inline SVG: one strip and box per side, on one axis.

Hand-written SVG rather than matplotlib: the HTML report then needs no plotting package, works
offline, weighs a few kilobytes per plot and comes out the same every time (so tests can read it).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from html import escape

COLOR_A = "#1f6fb4"
"""Side A (usually live) in every plot and legend."""
COLOR_B = "#e0701a"


def nice_ticks(lo: float, hi: float, count: int = 4) -> list[float]:
    """Round tick values (steps of 1, 2 or 5 times a power of ten) covering ``lo..hi``."""
    span = hi - lo
    if span <= 0:
        return [lo]
    raw = span / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step) * step
    ticks = []
    value = first
    while value <= hi + step * 1e-9:
        ticks.append(round(value, 9))
        value += step
    return ticks


def _quartiles(samples: Sequence[float]) -> tuple[float, float, float]:
    if len(samples) < 2:
        return samples[0], samples[0], samples[0]
    q1, q2, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return q1, q2, q3


def _fmt(value_us: float) -> str:
    return f"{value_us:.2f}" if abs(value_us) < 100 else f"{value_us:.1f}"


def strip_plot_svg(
    samples_a_ns: Sequence[float],
    samples_b_ns: Sequence[float],
    *,
    width: int = 340,
    label_a: str = "A",
    label_b: str = "B",
) -> str:
    """An SVG of both sides' samples (us): each sample a dot, the interquartile range a box, the
    median a bar. Empty sides are left out; a side labelled ``""`` gets no letter (one capture's
    plot). Returns ``""`` when neither side has samples."""
    rows = [
        (label, [s / 1000 for s in samples], color)
        for label, samples, color in ((label_a, samples_a_ns, COLOR_A), (label_b, samples_b_ns, COLOR_B))
        if samples
    ]
    if not rows:
        return ""
    values = [v for _, samples, _ in rows for v in samples]
    lo, hi = min(values), max(values)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    pad = (hi - lo) * 0.06
    lo, hi = lo - pad, hi + pad
    left, right, row_h, top = 16, 10, 22, 4
    axis_y = top + row_h * len(rows) + 2
    height = axis_y + 16

    def x(value: float) -> float:
        return left + (value - lo) / (hi - lo) * (width - left - right)

    parts = [
        f'<svg class="dist" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="sample distributions in us">'
    ]
    for row, (label, samples, color) in enumerate(rows):
        y = top + row_h * row + row_h / 2
        q1, median, q3 = _quartiles(samples)
        title = f"{label}: median {_fmt(median)} us, IQR {_fmt(q3 - q1)} us, {len(samples)} samples, {_fmt(min(samples))}..{_fmt(max(samples))} us"
        parts.append(f"<g><title>{escape(title)}</title>")
        if label:
            parts.append(
                f'<text x="2" y="{y + 4:.1f}" font-size="10" fill="{color}" font-weight="bold">{escape(label[:1])}</text>'
            )
        parts.append(
            f'<rect x="{x(q1):.1f}" y="{y - 8:.1f}" width="{max(x(q3) - x(q1), 1):.1f}" height="16" '
            f'fill="{color}" fill-opacity="0.15" stroke="{color}" stroke-width="1"/>'
        )
        for i, value in enumerate(samples):
            jitter = ((i * 7) % 5 - 2) * 2.2
            parts.append(
                f'<circle cx="{x(value):.1f}" cy="{y + jitter:.1f}" r="2.2" fill="{color}" fill-opacity="0.5"/>'
            )
        parts.append(
            f'<line x1="{x(median):.1f}" x2="{x(median):.1f}" y1="{y - 10:.1f}" y2="{y + 10:.1f}" stroke="{color}" stroke-width="2.5"/>'
        )
        parts.append("</g>")
    parts.append(f'<line x1="{left}" x2="{width - right}" y1="{axis_y}" y2="{axis_y}" stroke="#999" stroke-width="1"/>')
    ticks = nice_ticks(lo, hi)
    for i, tick in enumerate(ticks):
        tx = x(tick)
        unit = " us" if i == len(ticks) - 1 else ""
        anchor = "end" if i == len(ticks) - 1 and tx > width - 40 else "middle"
        parts.append(f'<line x1="{tx:.1f}" x2="{tx:.1f}" y1="{axis_y}" y2="{axis_y + 3}" stroke="#999"/>')
        parts.append(
            f'<text x="{tx:.1f}" y="{axis_y + 13}" font-size="9" fill="#555" text-anchor="{anchor}">{_fmt(tick)}{unit}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
