"""How far each kernel is from its GPU's limit: the bytes it must move and its share of the peak.

A kernel of a memory-bound fusion cannot run faster than the bytes it must move over the GPU's DRAM
bandwidth. The bytes come from the record alone:

- each input tensor is read once, counting the elements its strides reach (a broadcast dimension,
  stride 0, is read once), none for a CPU scalar tensor;
- a table a gather reads rows from (``index_select``, ``embedding_fwd``, ``gather``,
  ``take_along_axis``) counts only the rows the index can name: no more than the index holds, than
  its recorded value range spans, than the table has;
- each output tensor is written once (outputs are recorded since issue #43; an older file counts
  the inputs alone and says so), except an output that is a view of another output or of an input,
  which no kernel writes (:mod:`fusiondiff.records.aliases`; the row says so).

That is exact for a fusion that launches one kernel. A fusion nvFuser split into several kernels
moves more (each segment's intermediates go through DRAM): its kernels then get nvFuser's own
per-segment byte counts where the ``nvfuser`` timer recorded them (gathered tables corrected as
above), otherwise the fusion as a whole is judged (its bytes over the sum of its kernel times, a
lower bound), and every such estimate says so.

The peak is the capture's measured one (``Environment.peak_bandwidth``,
:mod:`fusiondiff.recording.peak`); :data:`VENDOR_GBS` holds datasheet figures, shown beside it only.
"""

from __future__ import annotations

import ast
import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from fusiondiff.records.aliases import aliased_outputs
from fusiondiff.records.definition import definition_calls
from fusiondiff.records.dtypes import itemsize_bytes
from fusiondiff.records.environment import Environment
from fusiondiff.records.model import Capture, FusionRecord, KernelRecord, TensorMeta
from fusiondiff.records.units import as_float

VENDOR_GBS: dict[str, float] = {
    "NVIDIA H100 80GB HBM3": 3350.0,
    "NVIDIA H100 PCIe": 2000.0,
    "NVIDIA H100 NVL": 3900.0,
    "NVIDIA H200": 4800.0,
    "NVIDIA H200 NVL": 4800.0,
    "NVIDIA A100-SXM4-80GB": 2039.0,
    "NVIDIA A100-SXM4-40GB": 1555.0,
    "NVIDIA A100 80GB PCIe": 1935.0,
    "NVIDIA RTX 6000 Ada Generation": 960.0,
    "NVIDIA L40S": 864.0,
    "NVIDIA B200": 8000.0,
}
"""DRAM bandwidth from NVIDIA's datasheets, in GB/s, by the name CUDA reports: shown beside the
measured peak, never used as the peak (a board can run its memory slower than the sheet says)."""

_GATHERS: dict[str, tuple[int, int]] = {
    "ops.index_select": (0, 1),
    "ops.take_along_axis": (0, 1),
    "ops.gather": (0, 1),
    "ops.embedding_fwd": (1, 0),
}
"""Gathering op -> (argument position of the table it reads from, of the index)."""
_SAME_VALUES = {"ops.reshape", "ops.broadcast", "ops.broadcast_in_dim", "ops.squeeze", "ops.permute", "ops.set"}
"""Ops whose result holds the same index values as their first argument (an index's origin)."""

Basis = Literal["fusion", "segment"]


@dataclass(frozen=True)
class Gather:
    """A gather in a definition: the input it reads rows from, along which dimension, and the
    input its index comes from (``None`` where the index is computed)."""

    table: int
    dim: int
    index: int | None


@dataclass(frozen=True)
class FusionBytes:
    """The bytes one fusion must move, read and written, and what that figure leaves out."""

    read: int
    written: int
    notes: tuple[str, ...] = ()
    """What is approximated, in words (an empty tuple: exact for the fusion's inputs and outputs)."""

    @property
    def total(self) -> int:
        return self.read + self.written


@dataclass(frozen=True)
class KernelTraffic:
    """One kernel's (or, where the kernels cannot be told apart, its fusion's) bytes and speed."""

    fusion: str
    """The fusion's key (``FusionRecord.key``)."""
    kernel_order: int | None
    """The kernel's launch position; ``None`` where the figures are the fusion's as a whole."""
    basis: Basis
    """``fusion``: the fusion's inputs and outputs; ``segment``: nvFuser's per-segment byte counts."""
    bytes: int
    time_ns: float
    """Median device time (the kernel's, or the sum of the fusion's kernels for ``basis='fusion'``
    over several kernels)."""
    peak_gbs: float | None
    notes: tuple[str, ...] = ()

    @property
    def achieved_gbs(self) -> float:
        return as_float(self.bytes) / self.time_ns if self.time_ns > 0 else math.nan

    @property
    def percent_of_peak(self) -> float | None:
        """Achieved bandwidth as a share of the measured peak, in percent; ``None`` without a peak."""
        if self.peak_gbs is None or not self.time_ns > 0:
            return None
        return 100.0 * self.achieved_gbs / self.peak_gbs

    @property
    def above_peak(self) -> bool:
        """Faster than the measured peak allows: the byte count is too high (nvFuser's count of a
        segment that slices or gathers a tensor it counts whole), not the kernel too fast."""
        percent = self.percent_of_peak
        return percent is not None and percent > 100.0

    @property
    def time_at_peak_ns(self) -> float | None:
        """How long moving its bytes takes at the peak: the floor of a memory-bound kernel."""
        return None if self.peak_gbs is None else self.bytes / self.peak_gbs

    @property
    def headroom_ns(self) -> float | None:
        """Time above the floor: what a kernel at the peak would save per call (0 at or above it)."""
        floor = self.time_at_peak_ns
        return None if floor is None else max(self.time_ns - floor, 0.0)


def peak_gbs(environment: Environment) -> float | None:
    """The capture's measured peak in GB/s, or ``None`` where it was not measured."""
    peak = environment.peak_bandwidth
    return None if peak is None else peak.gbs


PeakMissing = Literal["recorded_before", "not_measured"]
"""Why a capture has no measured peak: ``recorded_before``, written before fusiondiff measured one
(issue #43, which also began recording each fusion's outputs: a capture none of whose timed
fusions has them is older); ``not_measured``, recorded since, with ``--no-peak`` or no room for the
copy buffers (its warnings say which)."""


def peak_missing(capture: Capture) -> PeakMissing | None:
    """Why ``capture`` has no measured peak; ``None`` where it has one."""
    if capture.environment.peak_bandwidth is not None:
        return None
    timed = [f for f in capture.fusions if f.failure is None and f.kernels]
    return "not_measured" if any(f.outputs for f in timed) else "recorded_before"


def vendor_gbs(environment: Environment) -> float | None:
    """The datasheet's figure for the capture's GPU, where :data:`VENDOR_GBS` knows it."""
    return VENDOR_GBS.get(environment.gpu_name or "")


@functools.lru_cache(maxsize=4_096)
def gathers(definition: str) -> tuple[Gather, ...]:
    """The definition's gathers whose table is an input used as it is (the rows are counted along
    the input's own dimension; a reshaped table's rows are another shape), in order; the index may
    come from an input through ops that keep its values. Read once per definition text:
    the records of a session share a few definitions, and parsing one costs about a millisecond
    (a diff counts the bytes of every record on both sides), and not at all where no gathering
    op is named in it (most definitions)."""
    if not any(f"{op}(" in definition for op in _GATHERS):
        return ()
    position: dict[str, int] = {}
    origin: dict[str, int] = {}
    inputs = 0
    found = []
    for statement in definition_calls(definition):
        op, call = statement.op, statement.call
        if op == "define_tensor" or op == "define_scalar" and _is_input_scalar(call):
            if statement.targets:
                position[statement.targets[0]] = origin[statement.targets[0]] = inputs
            inputs += 1
        elif op in _SAME_VALUES and call.args and isinstance(call.args[0], ast.Name):
            if call.args[0].id in origin and statement.targets:
                origin[statement.targets[0]] = origin[call.args[0].id]
        elif op in _GATHERS:
            at, index_at = _GATHERS[op]
            table, index = _arg(call, at), _arg(call, index_at)
            if isinstance(table, ast.Name) and table.id in position:
                index_input = origin.get(index.id) if isinstance(index, ast.Name) else None
                found.append(Gather(position[table.id], _dim(call), index_input))
    return tuple(found)


def _arg(call: ast.Call, position: int) -> ast.expr | None:
    return call.args[position] if len(call.args) > position else None


def _dim(call: ast.Call) -> int:
    for keyword in call.keywords:
        if keyword.arg == "dim" and isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, int):
            return keyword.value.value
    return 0


def _is_input_scalar(call: ast.Call) -> bool:
    """``fd.define_scalar(None, dtype=...)`` is an input; a scalar with a value is a constant."""
    return bool(call.args) and isinstance(call.args[0], ast.Constant) and call.args[0].value is None


def reached_bytes(meta: TensorMeta) -> int | None:
    """Bytes of the distinct elements a tensor's view reaches (a stride-0 dimension once); 0 for a
    CPU tensor (a scalar nvFuser reads on the host); ``None`` for a scalar or an unknown dtype."""
    size = itemsize_bytes(meta.dtype)
    if meta.kind != "tensor" or size is None:
        return None
    if not meta.device.startswith("cuda"):
        return 0
    return math.prod(n for n, s in zip(meta.shape, meta.stride) if s != 0) * size


def _gathered_bytes(table: TensorMeta, gather: Gather, inputs: dict[int, TensorMeta]) -> tuple[int, str] | None:
    """Bytes of the rows a gather can read from ``table``, and how they were bounded."""
    size = reached_bytes(table)
    if size is None or not table.shape:
        return None
    dim = gather.dim % len(table.shape)
    rows = table.shape[dim]
    if rows == 0:
        return 0, "an empty table"
    row_bytes = size // rows
    index = inputs.get(gather.index) if gather.index is not None else None
    bound = f"input {table.index}: only the rows its gather can name are counted"
    if index is None or index.kind != "tensor":
        return size, f"input {table.index} is gathered from through a computed index: counted whole"
    named = math.prod(index.shape)
    if index.min_value is not None and index.max_value is not None:
        span = index.max_value - index.min_value  # infinite for a range of -1e308..1e308: no bound
        if math.isfinite(span) and span >= 0:
            named = min(named, int(span) + 1)
    return min(rows, named) * row_bytes, bound


def fusion_bytes(record: FusionRecord) -> FusionBytes | None:
    """What ``record`` must move, or ``None`` where an input's dtype is unknown."""
    inputs = {m.index: m for m in record.inputs}
    gathered = {g.table: g for g in gathers(record.definition)}
    read, notes = 0, []
    for meta in record.inputs:
        if meta.kind != "tensor":
            continue
        if meta.index in gathered:
            figure = _gathered_bytes(meta, gathered[meta.index], inputs)
            if figure is None:
                return None
            read += figure[0]
            notes.append(figure[1])
            continue
        size = reached_bytes(meta)
        if size is None:
            return None
        read += size
    written = 0
    aliased = aliased_outputs(record.definition, record.outputs, record.inputs) if record.outputs else {}
    notes += aliased.values()
    for meta in record.outputs:
        if meta.index in aliased:
            continue
        size = reached_bytes(meta)
        if size is None:
            return None
        written += size
    if not record.outputs:
        notes.append("outputs not recorded (a file from before issue #43): inputs only")
    return FusionBytes(read, written, tuple(notes))


def counted_whole(record: FusionRecord, input_bytes: int) -> tuple[tuple[Gather, int], ...]:
    """The gathers whose table a count of the inputs' bytes, ``input_bytes``, holds whole (nvFuser's
    profiler counts every input tensor whole), each with its table's bytes; a table once, with its
    gather as :func:`fusion_bytes` counts it."""
    inputs = {m.index: m for m in record.inputs}
    found = []
    for gather in {g.table: g for g in gathers(record.definition)}.values():
        table = inputs.get(gather.table)
        whole = reached_bytes(table) if table is not None else None
        if whole and input_bytes >= whole:
            found.append((gather, whole))
    return tuple(found)


def _segment_bytes(kernel: KernelRecord, record: FusionRecord) -> tuple[int, tuple[str, ...]] | None:
    """nvFuser's byte count for a kernel's segment, with gathered tables counted by their rows."""
    reported = kernel.reported_bandwidth
    if reported is None:
        return None
    total = reported.input_bytes + reported.output_bytes
    notes = ["nvFuser's byte count for its segment (whole tensors)"]
    inputs = {m.index: m for m in record.inputs}
    for gather, whole in counted_whole(record, reported.input_bytes):
        figure = _gathered_bytes(inputs[gather.table], gather, inputs)
        if figure is not None:
            total -= whole - figure[0]
            notes.append(figure[1])
    return max(total, 0), tuple(notes)


def fusion_traffic(record: FusionRecord, peak: float | None) -> tuple[KernelTraffic, ...]:
    """Each kernel's bytes and speed (one entry for the whole fusion where its kernels cannot be
    told apart); empty for a failed or untimed fusion, or one whose bytes are unknown."""
    timed = [k for k in record.kernels if k.timing.samples_ns]
    if record.failure is not None or not timed:
        return ()
    whole = fusion_bytes(record)
    if len(timed) == 1:
        if whole is None:
            return ()
        kernel = timed[0]
        return (
            KernelTraffic(record.key, kernel.order, "fusion", whole.total, kernel.timing.median_ns, peak, whole.notes),
        )
    segments = [_segment_bytes(k, record) for k in timed]
    if all(s is not None for s in segments):
        return tuple(
            KernelTraffic(record.key, k.order, "segment", s[0], k.timing.median_ns, peak, s[1])
            for k, s in zip(timed, segments)
            if s is not None
        )
    if whole is None:
        return ()
    notes = (
        *whole.notes,
        f"{len(timed)} kernels judged together: the fusion's inputs and outputs over their summed time "
        "(intermediates between them not counted: a lower bound)",
    )
    return (
        KernelTraffic(
            record.key, None, "fusion", whole.total, math.fsum(k.timing.median_ns for k in timed), peak, notes
        ),
    )


def capture_traffic(fusions: Iterable[FusionRecord], environment: Environment) -> list[KernelTraffic]:
    """Every kernel's traffic in a capture, against its measured peak."""
    peak = peak_gbs(environment)
    return [t for record in fusions for t in fusion_traffic(record, peak)]


def furthest_from_peak(
    traffic: Iterable[KernelTraffic], call_counts: dict[str, int] | None = None
) -> list[KernelTraffic]:
    """Kernels ordered by the time a kernel at the peak would save, per call times the fusion's
    calls (where the time is to be won), most first; those without a peak are left out."""
    counts = call_counts or {}
    with_peak = [t for t in traffic if t.headroom_ns is not None]
    return sorted(
        with_peak, key=lambda t: (-(t.headroom_ns or 0.0) * counts.get(t.fusion, 1), t.fusion, t.kernel_order or 0)
    )


@dataclass(frozen=True)
class ReportedComparison:
    """A kernel's bandwidth as fusiondiff counts it beside nvFuser's own figure (``PythonProfiler``,
    recorded by the ``nvfuser`` timer), and why they disagree."""

    ours_bytes: int
    theirs_bytes: int
    ours_gbs: float
    theirs_gbs: float
    ours_percent: float | None
    """Against the measured peak; ``None`` without one."""
    theirs_percent: float
    """Against nvFuser's peak (its own theoretical figure)."""
    theirs_peak_gbs: float | None
    """The peak nvFuser divided by, recovered from its two figures; ``None`` when it reported 0 %."""
    reasons: tuple[str, ...]
    """Why the figures differ, in words; empty when they agree within :data:`AGREE`."""


AGREE = 0.05
"""Two byte counts or two peaks within 5 % of each other agree."""


def compare_reported(traffic: KernelTraffic, kernel: KernelRecord, record: FusionRecord) -> ReportedComparison | None:
    """``traffic`` (one kernel's) beside nvFuser's figures for ``kernel``; ``None`` where nvFuser
    reported none or ``traffic`` is a whole multi-kernel fusion's."""
    reported = kernel.reported_bandwidth
    if reported is None or traffic.kernel_order != kernel.order:
        return None
    theirs_bytes = reported.input_bytes + reported.output_bytes
    theirs_peak = 100.0 * reported.effective_gbs / reported.percent_of_peak if reported.percent_of_peak > 0 else None
    reasons = []
    if theirs_bytes and abs(traffic.bytes / theirs_bytes - 1) > AGREE:
        whole = [g for g, _ in counted_whole(record, reported.input_bytes)]
        if whole:
            tables = ", ".join(f"input {g.table}" for g in whole)
            reasons.append(f"nvFuser counts the gathered-from {tables} whole; only the rows the index names are read")
        if not record.outputs:
            reasons.append("this capture has no outputs recorded, so its count is the inputs alone")
        if not reasons:
            reasons.append(
                f"the byte counts differ ({theirs_bytes / 1e6:.1f} MB by nvFuser, {traffic.bytes / 1e6:.1f} MB here)"
            )
    if reported.percent_of_peak > 100.0:
        reasons.append(
            "nvFuser's share of its own peak is above 100 %, more than DRAM can deliver: its byte count is too high "
            "(an input the kernel reads in part, a gather or a slice, counted whole)"
        )
    if theirs_peak is not None and traffic.peak_gbs is not None and abs(theirs_peak / traffic.peak_gbs - 1) > AGREE:
        reasons.append(
            f"nvFuser's peak is {theirs_peak:.0f} GB/s (from the memory clock and bus width), the measured copy "
            f"reaches {traffic.peak_gbs:.0f} GB/s"
        )
    return ReportedComparison(
        ours_bytes=traffic.bytes,
        theirs_bytes=theirs_bytes,
        ours_gbs=traffic.achieved_gbs,
        theirs_gbs=reported.effective_gbs,
        ours_percent=traffic.percent_of_peak,
        theirs_percent=reported.percent_of_peak,
        theirs_peak_gbs=theirs_peak,
        reasons=tuple(reasons),
    )
