"""How far each kernel is from its GPU's limit in ``show``'s text: a kernel's figures on its line,
then the notes they carry, those furthest from the limit and nvFuser's own figures beside them
(:mod:`.traffic_view`'s rows and words)."""

from __future__ import annotations

from fusiondiff.report.layout import table
from fusiondiff.report.views.traffic_view import (
    RANKED_TITLE,
    REPORTED_HEADER,
    TrafficRow,
    TrafficView,
    gbs_text,
    marks_text,
    ranked_cells,
    reported_cells,
    reported_intro,
    reported_lead,
    size_text,
)


def kernel_figure(row: TrafficRow, with_bytes: bool = True) -> str:
    """``65.8 % of peak  2634 GB/s  234.9 MB [b]`` (no share without a measured peak)."""
    t = row.traffic
    parts = [] if t.percent_of_peak is None else [f"{t.percent_of_peak:5.1f} % of peak"]
    parts.append(f"{gbs_text(t.achieved_gbs):>4} GB/s")
    if with_bytes:
        parts.append(f"{size_text(t.bytes):>8}")
    return "  ".join(parts) + (f" [{marks_text(row)}]" if row.marks else "")


def text_lines(view: TrafficView, width: int | None) -> list[str]:
    """What ``show`` says after the fusions: the notes the figures carry, those furthest from the
    limit, and where nvFuser's own figures differ; nothing without a row."""
    if not view.rows:
        return []
    lines = ["  notes on the bandwidth figures", *(f"    [{mark}] {words}" for mark, words in view.notes)]
    if view.ranked:
        header, rows = ranked_cells(view, long=False)
        lines += [f"  {RANKED_TITLE}", *("  " + line for line in table(header, rows, _less(width, 2), keys=1))]
    if view.compared:
        lines += [f"  {reported_intro(view)}", f"    {reported_lead(view)}"]
        if view.disagreements:
            rows, reasons = reported_cells(view, long=False)
            lines += ["  " + line for line in table(REPORTED_HEADER, rows, _less(width, 2), keys=1)]
            lines += [f"    ({n}) {reason}" for n, reason in enumerate(reasons, 1)]
    return lines


def _less(width: int | None, by: int) -> int | None:
    return None if width is None else width - by
