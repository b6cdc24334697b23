"""Perfetto trace: both sides on one timeline, and a derived view of how blocks fill the SMs.

Chrome trace-event JSON (``{"traceEvents": [...]}``), which ui.perfetto.dev and chrome://tracing
open. Times are in microseconds, as the format wants.

- One process per side (``A (live): kernels``, ``B (replay): kernels``), each with a ``fusions``
  track and a ``kernels (median)`` track. Every kernel is one event lasting its median duration;
  a fusion's kernels are laid end to end in launch order. Matched fusions start at the same time
  on both sides, so a longer kernel shows as a longer bar right under its counterpart. Event args
  hold the launch configuration, registers, shared memory, the inputs' layout, the sample
  statistics and the verdict. Fusions without a counterpart come after the matched ones.
- With ``sm_tracks`` (``report --format perfetto --sm-tracks``; off by default: a track per SM
  outweighs the rest of the trace), one process per side (``A (live): SMs, derived``) with a
  track per SM: for each kernel, how
  its blocks fill the SMs in waves, from the grid, the block and the occupancy the GPU's limits
  allow (:mod:`fusiondiff.report.views.occupancy`). Full waves are one event per SM; the tail wave shows
  which SMs still have blocks and which idle. This is derived, not measured: it assumes blocks
  are dealt to SMs in turn and take equal time, and every event says so in its args (as in
  FlashInfer's SM-level profiler, but without per-block timestamps).
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator
from typing import Any

from fusiondiff.diff.records import FusionPair, KernelPair, TimingVerdict
from fusiondiff.records.limits import CTAS_SHOWN, DERIVED_EVENTS, TRACE_NAME_CHARS
from fusiondiff.records.model import Capture, FusionRecord, KernelRecord, traced_name
from fusiondiff.report.formats.block_perfetto import NOTE as MEASURED_NOTE
from fusiondiff.report.formats.block_perfetto import MeasuredSMs, block_args
from fusiondiff.report.interface import DiffReport, Renderer
from fusiondiff.report.layout import cut
from fusiondiff.report.views import content as c
from fusiondiff.report.views.occupancy import occupancy

GAP_NS = 2000
"""Space between consecutive fusions on the timeline."""

DERIVED_NOTE = (
    "derived, not measured: blocks per SM from grid, block, registers and shared memory against the "
    "GPU's per-SM limits; blocks assumed dealt to SMs in turn and equally long"
)

MAX_DERIVED_EVENTS = DERIVED_EVENTS
"""Derived per-SM slices one side's trace holds at most (about 12 MB of JSON): that view is one
slice per SM per kernel, so it grew with kernels times SMs (a 0.35 MB capture once gave a 750 MB
trace). Kernels past it keep their kernel slice and its derived occupancy, not their SM rows."""

_PID = {"A": 1, "B": 2}
_SM_PID = {"A": 3, "B": 4}
_TID_FUSIONS, _TID_KERNELS = 1, 2


def _meta(event: str, pid: int, tid: int | None = None, /, **args: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"ph": "M", "name": event, "pid": pid, "args": args}
    if tid is not None:
        meta["tid"] = tid
    return meta


def _us(ns: float) -> float | None:
    """Microseconds; ``None`` (null) for a value a record does not have (an untimed fusion's
    median): the trace is strict JSON."""
    return None if ns != ns else round(ns / 1000, 4)


def _span(start_ns: int, dur_ns: int) -> dict[str, float]:
    """``ts`` and ``dur`` in microseconds from whole nanoseconds. The timeline is laid out in
    integer nanoseconds so that abutting events meet exactly; each lasts 1 ns less than its slot,
    because trace readers truncate ``us * 1000`` to nanoseconds and a 1 ns overlap would make two
    events of one track overlap instead of following each other."""
    return {"ts": start_ns / 1000, "dur": max(dur_ns - 1, 1) / 1000}


def _kernel_args(fusion: FusionRecord, kernel: KernelRecord, capture: Capture, label: str) -> dict[str, Any]:
    launch, timing = kernel.launch, kernel.timing
    args: dict[str, Any] = {
        "fusion": label,
        "kernel": kernel.name.split("(", 1)[0],
        "scheduler": kernel.scheduler,
        "segment": kernel.group_id,
        "grid": c.dims(launch.grid),
        "block": c.dims(launch.block),
        "registers_per_thread": launch.registers_per_thread,
        "shared_mem_bytes": launch.shared_mem_bytes,
        "median_us": _us(timing.median_ns),
        "iqr_us": _us(timing.iqr_ns),
        "min_us": _us(timing.min_ns),
        "max_us": _us(timing.max_ns),
        "samples": timing.count,
        "inputs": [c.input_text(t) for t in fusion.inputs],
    }
    if launch.cluster:
        args["cluster"] = c.dims(launch.cluster)
    if kernel.source_hash:
        args["source_sha256"] = kernel.source_hash[:12]
    occ = occupancy(launch, capture.environment)
    if occ is not None:
        args["derived_occupancy"] = {
            "blocks": occ.blocks,
            "blocks_per_sm": occ.blocks_per_sm,
            "limited_by": occ.limited_by,
            "waves": round(occ.waves, 2),
            "limits_of_compute_capability": occ.capability + (" (assumed)" if occ.assumed_capability else ""),
        }
    return args


def _verdict_args(timing: TimingVerdict | None) -> dict[str, Any]:
    if timing is None:
        return {"verdict (B vs A)": "only on this side"}
    return {"verdict (B vs A)": timing.verdict, "B/A": None if timing.ratio != timing.ratio else round(timing.ratio, 3)}


def _sm_events(
    side: str, kernel: KernelRecord, capture: Capture, start_ns: int, dur_ns: int
) -> Iterator[dict[str, Any]]:
    occ = occupancy(kernel.launch, capture.environment)
    if occ is None or occ.blocks_per_sm == 0 or occ.blocks == 0:
        return
    waves = occ.full_waves + (1 if occ.tail_blocks else 0)
    full_ns = round(dur_ns * occ.full_waves / waves)
    name = cut(kernel.normalized_name, TRACE_NAME_CHARS)
    # the long explanation is on the process (and in otherData); each event says it is derived
    common = {"derived": True, "blocks": occ.blocks, "blocks_per_sm": occ.blocks_per_sm, "limited_by": occ.limited_by}
    for sm in range(occ.sm_count):
        tid = sm + 1
        if occ.full_waves:
            yield {
                "ph": "X",
                "name": name,
                "cat": "derived",
                "pid": _SM_PID[side],
                "tid": tid,
                **_span(start_ns, full_ns),
                "args": {
                    **common,
                    "waves": f"1-{occ.full_waves} of {occ.waves:.2f}",
                    "resident_blocks": occ.blocks_per_sm,
                },
            }
        tail = occ.tail_blocks_on(sm)
        if tail:
            yield {
                "ph": "X",
                "name": f"{name} (tail: {tail} of {occ.blocks_per_sm} slots)",
                "cat": "derived",
                "pid": _SM_PID[side],
                "tid": tid,
                **_span(start_ns + full_ns, dur_ns - full_ns),
                "args": {
                    **common,
                    "waves": f"wave {waves}, the tail: {occ.tail_blocks} of {occ.concurrent_blocks} slots used",
                    "resident_blocks": tail,
                },
            }


def _fusion_events(
    side: str,
    capture: Capture,
    fusion: FusionRecord,
    label: str,
    start_ns: int,
    kernel_verdicts: dict[int, TimingVerdict | None],
    fusion_verdict: TimingVerdict | None,
    measured: tuple[MeasuredSMs, int] | None,
    derived: dict[str, int],
) -> Generator[dict[str, Any], None, int]:
    """Events of one fusion on one side starting at ``start_ns``, one by one; returns the fusion's
    length (ns)."""
    cursor = start_ns
    for kernel in sorted(fusion.kernels, key=lambda k: k.order):
        median = kernel.timing.median_ns
        dur = max(round(median), 2) if median == median else 2
        args = {**_kernel_args(fusion, kernel, capture, label), **_verdict_args(kernel_verdicts.get(kernel.order))}
        timeline = fusion.sm_timeline.kernel(kernel.order) if fusion.sm_timeline else None
        args.update(block_args(timeline))
        yield {
            "ph": "X",
            "name": kernel.normalized_name,
            "cat": "kernel",
            "pid": _PID[side],
            "tid": _TID_KERNELS,
            **_span(cursor, dur),
            "args": args,
        }
        # without SM tracks (``measured`` None) the kernel's args alone carry its block-level figures
        if measured is not None and measured[0].has(measured[1], kernel.order):
            sms, index = measured  # measured: the derived view only where nothing was
            yield from sms.kernel_events(
                index, kernel.order, cut(kernel.normalized_name, TRACE_NAME_CHARS), timeline, cursor
            )
        elif measured is not None:
            rows = list(_sm_events(side, kernel, capture, cursor, dur)) if derived["left"] > 0 else []
            if rows and len(rows) <= derived["left"]:
                yield from rows
                derived["left"] -= len(rows)
                derived["drawn"] += 1
            elif rows or derived["left"] <= 0:
                derived["left"] = 0
                derived["skipped"] += 1
        cursor += dur
    length = cursor - start_ns
    name = traced_name(fusion.name, fusion.trace)
    yield {
        "ph": "X",
        "name": name,
        "cat": "fusion",
        "pid": _PID[side],
        "tid": _TID_FUSIONS,
        **_span(start_ns, length),
        "args": {
            "pair": label,
            "median_us": _us(fusion.timing.median_ns),
            "kernels": len(fusion.kernels),
            "inputs": [c.input_text(t) for t in fusion.inputs],
            **_verdict_args(fusion_verdict),
        },
    }
    return length


def _kernel_verdicts(pair: FusionPair, side: str) -> dict[int, TimingVerdict | None]:
    kernels: tuple[KernelPair, ...] = pair.kernels
    return {(k.order_a if side == "A" else k.order_b): k.timing for k in kernels}


def build_trace(report: DiffReport, sm_tracks: bool = False) -> dict[str, Any]:
    """The trace as JSON-ready data (see the module docstring); the per-SM tracks, derived and
    measured, only with ``sm_tracks``."""
    trace = _Trace(report, sm_tracks)
    events = list(trace.events())
    return {"traceEvents": events, "displayTimeUnit": "ns", "otherData": trace.other_data()}


def trace_chunks(report: DiffReport, sm_tracks: bool = False) -> Iterator[str]:
    """:func:`render_perfetto`'s text in pieces of :data:`CHUNK_EVENTS` events: the events are made
    and written one by one, never held all at once."""
    trace = _Trace(report, sm_tracks)
    yield '{"traceEvents":['
    batch: list[str] = []
    first = True
    for event in trace.events():
        batch.append(_dumps(event))
        if len(batch) == CHUNK_EVENTS:
            yield ("" if first else ",") + ",".join(batch)
            batch, first = [], False
    if batch:
        yield ("" if first else ",") + ",".join(batch)
    yield '],"displayTimeUnit":"ns","otherData":' + _dumps(trace.other_data()) + "}\n"


CHUNK_EVENTS = 2_000
"""Events of the trace :func:`trace_chunks` gathers into one piece."""


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


class _Trace:
    """One trace being made: its events (:meth:`events`, once), then what it says of them
    (:meth:`other_data`: which kernels its per-SM views left out)."""

    def __init__(self, report: DiffReport, sm_tracks: bool) -> None:
        self.report = c.clean_report(report)
        self.sm_tracks = sm_tracks
        result = self.report.result
        self.labels = {"A": result.label_a, "B": result.label_b}
        self.measured = {
            "A": MeasuredSMs("A", self.labels["A"], self.report.arrays_a),
            "B": MeasuredSMs("B", self.labels["B"], self.report.arrays_b),
        }
        self.derived = {side: {"left": MAX_DERIVED_EVENTS, "drawn": 0, "skipped": 0} for side in ("A", "B")}

    def events(self) -> Iterator[dict[str, Any]]:
        """Every event of the trace, in its order."""
        report, sm_tracks, labels = self.report, self.sm_tracks, self.labels
        result = report.result
        captures = {"A": report.a, "B": report.b}
        for side in ("A", "B"):
            yield from _process_meta(side, labels[side], captures[side].environment.sm_count or 0, sm_tracks)
        measured, derived = self.measured, self.derived
        cursor = 0
        for pair in result.pairs:
            lengths = []
            for side, fusion, index in (
                ("A", report.fusion_a(pair), pair.index_a),
                ("B", report.fusion_b(pair), pair.index_b),
            ):
                length = yield from _fusion_events(
                    side,
                    captures[side],
                    fusion,
                    pair.label,
                    cursor,
                    _kernel_verdicts(pair, side),
                    pair.timing,
                    (measured[side], index) if sm_tracks else None,
                    derived[side],
                )
                lengths.append(length)
            cursor += max(lengths) + GAP_NS
        ends = {"A": cursor, "B": cursor}
        for unmatched in result.unmatched:
            capture = captures[unmatched.side]
            index, fusion = next((i, f) for i, f in enumerate(capture.fusions) if f.key == unmatched.key)
            length = yield from _fusion_events(
                unmatched.side,
                capture,
                fusion,
                f"{unmatched.name} (only in {unmatched.side})",
                ends[unmatched.side],
                {},
                None,
                (measured[unmatched.side], index) if sm_tracks else None,
                derived[unmatched.side],
            )
            ends[unmatched.side] += length + GAP_NS
        if sm_tracks:
            yield from measured["A"].metadata() + measured["B"].metadata()

    def other_data(self) -> dict[str, Any]:
        """The trace's ``otherData``: where it is from, how it is laid out, what it left out (asked
        for after :meth:`events`)."""
        from fusiondiff.records.version import __version__

        report, labels = self.report, self.labels
        tracks = (
            {"sm_tracks": DERIVED_NOTE, "measured_sm_tracks": MEASURED_NOTE}
            if self.sm_tracks
            else {"sm_tracks": NO_SM_TRACKS}
        )
        return {
            "producer": f"fusiondiff {__version__}",
            "A": f"{labels['A']}: {report.path_a or '-'}",
            "B": f"{labels['B']}: {report.path_b or '-'}",
            "layout": "matched fusions start together on both sides; kernels at their median duration, end to end",
            **tracks,
            **{
                f"derived_sm_view_{side}": f"drawn for {d['drawn']} kernel(s); {d['skipped']} more left out: "
                f"the derived view is held to {MAX_DERIVED_EVENTS} slices a side"
                for side, d in self.derived.items()
                if d["skipped"]
            },
            **{
                f"measured_sm_view_{side}": f"{m.left_out} measured kernel(s) left out: the measured view is held "
                f"to {CTAS_SHOWN} CTA slices a side"
                for side, m in self.measured.items()
                if m.left_out
            },
            **({"selection": report.selection} if report.selection else {}),
        }


def _process_meta(side: str, label: str, sm_count: int, sm_tracks: bool) -> list[dict[str, Any]]:
    """The metadata events naming one side's processes and tracks."""
    events = [
        _meta("process_name", _PID[side], name=f"{label}: kernels (median durations)"),
        _meta("process_sort_index", _PID[side], sort_index=_PID[side]),
        _meta("thread_name", _PID[side], _TID_FUSIONS, name="fusions"),
        _meta("thread_name", _PID[side], _TID_KERNELS, name="kernels"),
    ]
    if not sm_tracks:
        return events
    events += [
        _meta("process_name", _SM_PID[side], name=f"{label}: SMs, derived from grid, block and occupancy"),
        _meta("process_sort_index", _SM_PID[side], sort_index=_SM_PID[side]),
        _meta("process_labels", _SM_PID[side], labels=DERIVED_NOTE),
    ]
    events += [_meta("thread_name", _SM_PID[side], sm + 1, name=f"SM {sm}") for sm in range(sm_count)]
    events += [_meta("thread_sort_index", _SM_PID[side], sm + 1, sort_index=sm + 1) for sm in range(sm_count)]
    return events


def render_perfetto(report: DiffReport, sm_tracks: bool = False) -> str:
    return "".join(trace_chunks(report, sm_tracks))


NO_SM_TRACKS = (
    "left out: `fusiondiff report --format perfetto --sm-tracks` adds a track per SM (derived, or measured per CTA)"
)


class PerfettoRenderer(Renderer):
    name = "perfetto"

    def __init__(self, sm_tracks: bool = False) -> None:
        self.sm_tracks = sm_tracks
        """The per-SM tracks too (derived from the launch, or measured per CTA where recorded)."""

    def render(self, report: DiffReport) -> str:
        return render_perfetto(report, self.sm_tracks)

    def chunks(self, report: DiffReport) -> Iterator[str]:
        return trace_chunks(report, self.sm_tracks)
