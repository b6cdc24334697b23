"""How far each kernel is from its GPU's limit (issue #43), as every view of a capture shows it:
the rows, cells and words, worked out once; the layout is :mod:`.traffic_text`'s (``show``) and
:mod:`.traffic_markup`'s (Markdown, HTML), the data of the JSON and the notebook
:mod:`.traffic_data`'s.

The figures are :mod:`fusiondiff.records.traffic`'s. A kernel's share of the peak is against the
capture's measured peak only: where a capture has none, the column stays empty and one sentence
says why; the datasheet's figure is shown beside the measured one, never in its place. What a
figure approximates (a multi-kernel fusion judged whole, outputs not recorded, nvFuser's own
segment counts, a gather's rows) is the data layer's note, shown once as a footnote under a
letter; a figure above the peak is flagged as a byte count that is too high. The ranking is where
the time is to be won (:func:`~fusiondiff.records.traffic.furthest_from_peak`); nvFuser's own
figures, where the ``nvfuser`` timer recorded them, are set beside ours with the reasons they
differ (:func:`~fusiondiff.records.traffic.compare_reported`), each reason said once.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fusiondiff.records.environment import PeakBandwidth
from fusiondiff.records.model import Capture, FusionRecord, traced_name
from fusiondiff.records.traffic import (
    KernelTraffic,
    ReportedComparison,
    compare_reported,
    furthest_from_peak,
    fusion_traffic,
    peak_gbs,
    peak_missing,
    vendor_gbs,
)
from fusiondiff.records.units import TOO_LARGE, Column, as_float

TOP = 5
"""Kernels in the list of those furthest from the limit."""
ABOVE_PEAK = "!"
"""The mark of a figure above the measured peak."""
ABOVE_PEAK_NOTE = (
    "above the measured peak: the byte count is too high (a tensor counted whole that the kernel only "
    "slices or gathers from), not the kernel faster than DRAM"
)
RANKED_TITLE = "furthest from the limit: the time a kernel at the peak would save, per call x calls"
OLD_FILE = "this capture was recorded before fusiondiff measured the peak"
NOT_MEASURED = "the peak was not measured (--no-peak, or no room for the copy on the GPU: see the warnings)"
KERNEL_ROWS = 100
"""Kernel rows a document lists per capture; the notebook's ``to_dataframe("traffic")`` and the
diff record (``--format json``) hold them all."""
MAX_GROUPS = 10
"""Sets of reasons listed where nvFuser's figures disagree with ours (a few kernels each)."""
SECTION = "How far each kernel is from its GPU's limit"
ALL_ROWS = "the notebook's to_dataframe('traffic') and the diff record (--format json) have them all"
RANKED_HEADER = ("fusion / kernel", "to win", "per call", "calls", "% of peak", "median", "notes")
KERNEL_HEADER = ("fusion / kernel", "median", "bytes", "GB/s", "% of peak", "notes")
REPORTED_HEADER = ("fusion / kernel", "bytes", "nvFuser", "% of peak", "nvFuser %", "why")


@dataclass(frozen=True)
class TrafficRow:
    """One kernel's figures (or its fusion's, where its kernels are judged together), where they
    are in the capture, and what they are marked with."""

    position: int
    """The fusion's position in the capture (``#N``, as ``show`` numbers it)."""
    fusion: str
    """The fusion's name and trace (``nvFusion1 [forward]``)."""
    name: str
    """The fusion's name alone (``nvFusion1``)."""
    kernel: str | None
    """The kernel's normalized name; ``None`` where the figures are the fusion's kernels together."""
    kernels: int
    """How many kernels the figures cover."""
    calls: int
    traffic: KernelTraffic
    marks: tuple[str, ...]
    """Letters of the footnotes its figures carry, then :data:`ABOVE_PEAK` where it is above the peak."""
    reported: ReportedComparison | None
    """nvFuser's own figures beside ours, where it reported them for this kernel."""

    @property
    def label(self) -> str:
        """``#3 nvfuser_pointwise_g0``, ``#1 nvFusion1 (3 kernels)``: for ``show``, which numbers
        its fusions."""
        return f"#{self.position} {self.kernel or f'{self.name} ({self.kernels} kernels)'}"

    @property
    def long_label(self) -> str:
        """``#3 nvFusion3 [forward]: nvfuser_pointwise_g0``: for a document, whose fusions are not
        numbered."""
        if self.kernel is None:
            return f"#{self.position} {self.fusion} ({self.kernels} kernels)"
        return f"#{self.position} {self.fusion}: {self.kernel}"

    @property
    def to_win_ns(self) -> float | None:
        """Time a kernel at the peak would save over the session: per call times the calls."""
        headroom = self.traffic.headroom_ns
        return None if headroom is None else headroom * self.calls


@dataclass(frozen=True)
class Disagreement:
    """A kernel whose byte count or share of the peak differs from nvFuser's for reasons that are
    not true of every kernel compared."""

    row: TrafficRow
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class DisagreementGroup:
    """The kernels that differ from nvFuser's figures for the same reasons: the first few, and
    how many more."""

    reasons: tuple[str, ...]
    rows: tuple[TrafficRow, ...]
    more: int


@dataclass(frozen=True)
class TrafficView:
    """A capture's figures, as every renderer shows them."""

    peak: str
    """The header sentence: the measured peak beside the datasheet's, or why there is none."""
    measured: bool
    rows: tuple[TrafficRow, ...]
    notes: tuple[tuple[str, str], ...]
    """(mark, words) of every mark the rows carry, in the order they first appear."""
    ranked: tuple[TrafficRow, ...]
    """The :data:`TOP` furthest from the limit, most time to win first (empty without a peak)."""
    compared: int
    """Kernels nvFuser reported its own figures for."""
    everywhere: tuple[str, ...]
    """Reasons nvFuser's figures differ that hold for every kernel compared: said once."""
    disagreements: tuple[Disagreement, ...]
    """The other differing kernels, the largest byte-count disagreement first."""

    def grouped(self, per_reason: int = 2) -> list[DisagreementGroup]:
        """The disagreements by their reasons, in the order their first kernel comes, each with
        at most ``per_reason`` kernels listed: every reason once, however many kernels share it."""
        groups: dict[tuple[str, ...], list[TrafficRow]] = {}
        for d in self.disagreements:
            groups.setdefault(d.reasons, []).append(d.row)
        return [
            DisagreementGroup(reasons, tuple(rows[:per_reason]), max(len(rows) - per_reason, 0))
            for reasons, rows in groups.items()
        ]

    @functools.cached_property
    def any_above(self) -> bool:
        """Whether a row is above the measured peak (asked for every cell of a capture's table)."""
        return any(r.traffic.above_peak for r in self.rows)

    def row(self, position: int, kernel_order: int | None) -> TrafficRow | None:
        """The row of a fusion's kernel (``None``: of the fusion's kernels judged together)."""
        return self._by_kernel.get((position, kernel_order))

    @functools.cached_property
    def _by_kernel(self) -> dict[tuple[int, int | None], TrafficRow]:
        """The rows by fusion position and kernel order, the first of each: a capture's table asks
        for every kernel's row."""
        by_kernel: dict[tuple[int, int | None], TrafficRow] = {}
        for r in self.rows:
            by_kernel.setdefault((r.position, r.traffic.kernel_order), r)
        return by_kernel


def size_text(n_bytes: float) -> str:
    """``512 kB``, ``234.9 MB``, ``1.12 GB``: decimal units, as GB/s is; ``too large`` past any float."""
    n_bytes = as_float(n_bytes)
    if not math.isfinite(n_bytes):
        return TOO_LARGE
    if n_bytes >= 1e9:
        return f"{n_bytes / 1e9:.2f} GB"
    if n_bytes >= 1e6:
        return f"{n_bytes / 1e6:.1f} MB"
    return f"{n_bytes / 1e3:.0f} kB"


def percent_text(percent: float | None) -> str:
    return "-" if percent is None else f"{percent:.1f} %"


def gbs_text(gbs: float) -> str:
    if math.isnan(gbs):
        return "-"
    return f"{gbs:.0f}" if math.isfinite(gbs) else TOO_LARGE


def _buffer(peak: PeakBandwidth) -> str:
    size = peak.copy_bytes
    return f"{size / 2**30:g} GiB" if size >= 2**30 else f"{size / 2**20:g} MiB"


def peak_sentence(capture: Capture) -> str:
    """``peak 4000 GB/s measured (device-to-device copy ..., 1 GiB); datasheet 4800 GB/s``, or
    why there is no share of the peak: a file from before fusiondiff measured it (no fusion has
    its outputs recorded, which came with the peak) or a capture that did not measure it."""
    env = capture.environment
    vendor = vendor_gbs(env)
    datasheet = f"datasheet {vendor:.0f} GB/s" if vendor is not None else "no datasheet figure known for this GPU"
    peak = env.peak_bandwidth
    if peak is not None:
        return f"peak {peak.gbs:.0f} GB/s measured ({peak.method}; {_buffer(peak)}); {datasheet}"
    why = OLD_FILE if peak_missing(capture) == "recorded_before" else NOT_MEASURED
    instead = f" (the datasheet's {vendor:.0f} GB/s is not used in its place)" if vendor is not None else ""
    return f"% of peak: none, {why}{instead}"


def _letter(n: int) -> str:
    """``a`` to ``z``, then ``a2``..., for the ``n``-th note (from 0)."""
    return chr(ord("a") + n % 26) + (str(n // 26 + 1) if n >= 26 else "")


def _kernel_name(record: FusionRecord, traffic: KernelTraffic) -> str | None:
    if traffic.kernel_order is None:
        return None
    return next((k.normalized_name for k in record.kernels if k.order == traffic.kernel_order), "?")


def _reported(record: FusionRecord, traffic: KernelTraffic) -> ReportedComparison | None:
    kernel = next((k for k in record.kernels if k.order == traffic.kernel_order), None)
    return None if kernel is None else compare_reported(traffic, kernel, record)


def capture_view(capture: Capture, positions: Sequence[int] | None = None, top: int = TOP) -> TrafficView:
    """The figures of the fusions at ``positions`` (``None``: all of them), in that order."""
    shown = range(len(capture.fusions)) if positions is None else positions
    peak = peak_gbs(capture.environment)
    marks: dict[str, str] = {}
    rows = []
    for position in shown:
        record = capture.fusions[position]
        timed = sum(1 for k in record.kernels if k.timing.samples_ns)
        for t in fusion_traffic(record, peak):
            letters = tuple(marks.setdefault(note, _letter(len(marks))) for note in t.notes)
            rows.append(
                TrafficRow(
                    position=position,
                    fusion=traced_name(record.name, record.trace),
                    name=record.name,
                    kernel=_kernel_name(record, t),
                    kernels=timed if t.kernel_order is None else 1,
                    calls=record.call_count,
                    traffic=t,
                    marks=letters + ((ABOVE_PEAK,) if t.above_peak else ()),
                    reported=_reported(record, t),
                )
            )
    notes = [(letter, note) for note, letter in marks.items()]
    if any(r.traffic.above_peak for r in rows):  # the mark's note last
        notes.append((ABOVE_PEAK, ABOVE_PEAK_NOTE))
    return TrafficView(
        peak=peak_sentence(capture),
        measured=peak is not None,
        rows=tuple(rows),
        notes=tuple(notes),
        ranked=_ranked(rows, top),
        **_disagreements(rows),
    )


def _ranked(rows: list[TrafficRow], top: int) -> tuple[TrafficRow, ...]:
    by_traffic = {id(r.traffic): r for r in rows}
    calls = {r.traffic.fusion: r.calls for r in rows}
    ranked = furthest_from_peak((r.traffic for r in rows), calls)
    return tuple(by_traffic[id(t)] for t in ranked[:top])


def _disagreements(rows: list[TrafficRow]) -> dict[str, Any]:
    """nvFuser's figures beside ours: the reasons true of every kernel compared, said once, and
    the kernels with another reason, most differing byte count first."""
    compared = [r for r in rows if r.reported is not None]
    reasons_of = {id(r): r.reported.reasons for r in compared if r.reported is not None}
    first = reasons_of[id(compared[0])] if compared else ()
    everywhere = [x for x in first if all(x in reasons for reasons in reasons_of.values())]
    found = []
    for r in sorted(compared, key=_byte_disagreement):
        own = tuple(reason for reason in reasons_of[id(r)] if reason not in everywhere)
        if own:
            found.append(Disagreement(r, own))
    return {"compared": len(compared), "everywhere": tuple(everywhere), "disagreements": tuple(found)}


def _byte_disagreement(row: TrafficRow) -> tuple[float, float, int]:
    """Largest ratio of the two byte counts first, then nvFuser's share of its peak, then position."""
    reported = row.reported
    assert reported is not None
    ours, theirs = reported.ours_bytes, reported.theirs_bytes
    ratio = max(ours, theirs) / min(ours, theirs) if min(ours, theirs) > 0 else math.inf
    return (-ratio, -reported.theirs_percent, row.position)


# --- cells the text, Markdown and HTML lay out ------------------------------------------------


def marks_text(row: TrafficRow) -> str:
    """``a,b,!``: a row's marks."""
    return ",".join(row.marks)


def _name(row: TrafficRow, long: bool) -> str:
    return row.long_label if long else row.label


def ranked_cells(view: TrafficView, long: bool = True) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """The header (units in it) and the cells of the list of those furthest from the limit, each
    named by its :attr:`~TrafficRow.long_label` (``long``) or its label."""
    win = Column.of(r.to_win_ns for r in view.ranked)
    time = Column.of(r.traffic.time_ns for r in view.ranked)
    header = (
        RANKED_HEADER[0],
        win.header("to win", brackets=True),
        win.header("per call", brackets=True),
        "calls",
        "% of peak",
        time.header("median", brackets=True),
        RANKED_HEADER[-1],
    )
    rows: list[tuple[str, ...]] = [
        (
            _name(r, long),
            win.cell(r.to_win_ns),
            win.cell(r.traffic.headroom_ns),
            str(r.calls),
            percent_text(r.traffic.percent_of_peak),
            time.cell(r.traffic.time_ns),
            marks_text(r),
        )
        for r in view.ranked
    ]
    return header, rows


def kernel_cells(view: TrafficView) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """The header and the cells of every kernel's figures, the first :data:`KERNEL_ROWS` of them."""
    time = Column.of(r.traffic.time_ns for r in view.rows[:KERNEL_ROWS])
    rows: list[tuple[str, ...]] = [
        (
            r.long_label,
            time.cell(r.traffic.time_ns),
            size_text(r.traffic.bytes),
            gbs_text(r.traffic.achieved_gbs),
            percent_text(r.traffic.percent_of_peak),
            marks_text(r),
        )
        for r in view.rows[:KERNEL_ROWS]
    ]
    return (KERNEL_HEADER[0], time.header("median", brackets=True), *KERNEL_HEADER[2:]), rows


def reported_cells(view: TrafficView, long: bool = True) -> tuple[list[tuple[str, ...]], list[str]]:
    """The kernels whose figures differ from nvFuser's, a few per set of reasons (named as in
    :func:`ranked_cells`), and the reasons their ``why`` column numbers."""
    rows: list[tuple[str, ...]] = []
    numbered: dict[str, int] = {}
    for group in view.grouped()[:MAX_GROUPS]:
        why = " ".join(f"({numbered.setdefault(reason, len(numbered) + 1)})" for reason in group.reasons)
        for row in group.rows:
            reported = row.reported
            assert reported is not None
            rows.append(
                (
                    _name(row, long),
                    size_text(reported.ours_bytes),
                    size_text(reported.theirs_bytes),
                    percent_text(reported.ours_percent),
                    percent_text(reported.theirs_percent),
                    why,
                )
            )
        if group.more:
            rows.append((f"... {group.more} more", "", "", "", "", why))
    return rows, list(numbered)


def reported_intro(view: TrafficView) -> str:
    """How many kernels nvFuser gave its own figures for, and what differs for every one."""
    said = f"; for every one, {'; '.join(view.everywhere)}" if view.everywhere else ""
    return f"nvFuser's own figures (its profiler; its % is of its own peak) beside these, for {view.compared} kernel(s){said}"


def reported_lead(view: TrafficView) -> str:
    """What the table of disagreements lists."""
    if not view.disagreements:
        return "they differ for no other reason"
    groups = view.grouped()
    left = "" if len(groups) <= MAX_GROUPS else f"; {len(groups) - MAX_GROUPS} more set(s) of reasons not shown"
    return f"where they differ for other reasons ({len(view.disagreements)} kernel(s), a few per reason{left}):"
