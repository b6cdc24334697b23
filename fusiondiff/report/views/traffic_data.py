"""How far each kernel is from its GPU's limit as data: the diff record's ``traffic`` and the
notebook's ``to_dataframe("traffic")``, from :mod:`.traffic_view`'s rows. Numbers as the records
keep them (ns, bytes, GB/s; the notebook's times in microseconds), the notes and nvFuser's reasons
as words."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fusiondiff.records.model import Capture
from fusiondiff.records.traffic import vendor_gbs
from fusiondiff.report.views.traffic_view import TrafficRow, capture_view


def row_data(row: TrafficRow) -> dict[str, Any]:
    """A row as JSON-ready data: numbers as the records keep them (ns, bytes, GB/s), notes as words."""
    t, reported = row.traffic, row.reported
    return {
        "position": row.position,
        "fusion": row.fusion,
        "key": t.fusion,
        "kernel": row.kernel,
        "kernel_order": t.kernel_order,
        "kernels": row.kernels,
        "basis": t.basis,
        "bytes": t.bytes,
        "time_ns": t.time_ns,
        "achieved_gbs": t.achieved_gbs,
        "peak_gbs": t.peak_gbs,
        "percent_of_peak": t.percent_of_peak,
        "above_peak": t.above_peak,
        "time_at_peak_ns": t.time_at_peak_ns,
        "headroom_ns": t.headroom_ns,
        "calls": row.calls,
        "to_win_ns": row.to_win_ns,
        "notes": list(t.notes),
        "nvfuser": None
        if reported is None
        else {
            "bytes": reported.theirs_bytes,
            "gbs": reported.theirs_gbs,
            "percent_of_its_peak": reported.theirs_percent,
            "its_peak_gbs": reported.theirs_peak_gbs,
            "reasons_they_differ": list(reported.reasons),
        },
    }


def view_data(capture: Capture, positions: Sequence[int] | None = None) -> dict[str, Any]:
    """A capture's figures for the JSON of a report: the peak as measured, the datasheet's figure,
    the sentence reports show, and every row (:func:`row_data`)."""
    from fusiondiff.records.codec import to_jsonable

    view = capture_view(capture, positions)
    peak = capture.environment.peak_bandwidth
    return {
        "peak": None if peak is None else to_jsonable(peak),
        "datasheet_gbs": vendor_gbs(capture.environment),
        "peak_words": view.peak,
        "kernels": [row_data(r) for r in view.rows],
    }


def dataframe_rows(capture: Capture, side: str | None = None) -> list[dict[str, Any]]:
    """A notebook's ``traffic`` table: :func:`row_data` flattened, times in microseconds."""
    rows = []
    for r in capture_view(capture).rows:
        data = row_data(r)
        reported = data.pop("nvfuser") or {}
        flat: dict[str, Any] = {} if side is None else {"side": side}
        for name, value in data.items():
            if name.endswith("_ns"):
                flat[name.removesuffix("_ns") + "_us"] = None if value is None else value / 1000
            elif name == "notes":
                flat[name] = "; ".join(value)
            else:
                flat[name] = value
        flat |= {
            "nvfuser_bytes": reported.get("bytes"),
            "nvfuser_gbs": reported.get("gbs"),
            "nvfuser_percent_of_its_peak": reported.get("percent_of_its_peak"),
            "nvfuser_differs_because": "; ".join(reported.get("reasons_they_differ", ())),
        }
        rows.append(flat)
    return rows
