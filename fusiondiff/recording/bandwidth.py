"""Judging nvFuser's bandwidth figures: flagged where they are wrong by construction, never repeated.

nvFuser's ``PythonProfiler`` computes a kernel's bandwidth as ``(input_bytes + output_bytes) / time``
with every input tensor counted whole. A gather (``index_select``, ``take_along_axis``, ``gather``,
``embedding_fwd``) reads only the rows it indexes, so an embedding lookup into a 1 GB table was
credited with 47,657 GB/s, 990 % of the H200's peak (seen). Two checks, both from the record alone:

- above 100 % of peak: impossible for DRAM traffic, whatever the cause;
- a gathered-from input counted whole: the kernel's ``input_bytes`` are at least the size of a
  tensor that the definition only gathers from.
"""

from __future__ import annotations

import ast
import dataclasses
import math

from fusiondiff.records.definition import definition_calls
from fusiondiff.records.model import FusionRecord, KernelRecord, TensorMeta

_GATHER_TABLE_ARG = {"ops.index_select": 0, "ops.take_along_axis": 0, "ops.gather": 0, "ops.embedding_fwd": 1}
"""Gathering op -> position of the tensor it reads rows from."""

_ITEMSIZE = {
    "torch.float64": 8, "torch.float32": 4, "torch.float16": 2, "torch.bfloat16": 2, "torch.int64": 8,
    "torch.int32": 4, "torch.int16": 2, "torch.int8": 1, "torch.uint8": 1, "torch.bool": 1,
    "torch.complex64": 8, "torch.complex128": 16, "torch.float8_e4m3fn": 1, "torch.float8_e5m2": 1,
}  # fmt: skip


def gathered_inputs(definition: str) -> set[int]:
    """Input positions of the tensors the definition gathers rows from (used as they are)."""
    position: dict[str, int] = {}
    inputs = 0
    found = set()
    for statement in definition_calls(definition):
        op, call = statement.op, statement.call
        if op == "define_tensor" or op == "define_scalar" and _is_input_scalar(call):
            if statement.targets:
                position[statement.targets[0]] = inputs
            inputs += 1
        elif op in _GATHER_TABLE_ARG:
            at = _GATHER_TABLE_ARG[op]
            table = call.args[at] if len(call.args) > at else None
            if isinstance(table, ast.Name) and table.id in position:
                found.add(position[table.id])
    return found


def _is_input_scalar(call: ast.Call) -> bool:
    """``fd.define_scalar(None, dtype=...)`` is an input; a scalar with a value is a constant."""
    return bool(call.args) and isinstance(call.args[0], ast.Constant) and call.args[0].value is None


def tensor_bytes(meta: TensorMeta) -> int | None:
    """Bytes of a tensor input's elements (its shape, not its storage); ``None`` for an unknown dtype."""
    size = _ITEMSIZE.get(meta.dtype)
    if meta.kind != "tensor" or size is None:
        return None
    return math.prod(meta.shape) * size


def suspect_reason(record: FusionRecord, kernel: KernelRecord, gathered: set[int]) -> str | None:
    """Why ``kernel``'s reported bandwidth is wrong by construction, or ``None``."""
    reported = kernel.reported_bandwidth
    if reported is None:
        return None
    reasons = []
    if reported.percent_of_peak > 100.0:
        reasons.append(f"{reported.percent_of_peak:.0f} % of peak is above what DRAM can deliver")
    for index in sorted(gathered):
        meta = next((m for m in record.inputs if m.index == index), None)
        table = tensor_bytes(meta) if meta is not None else None
        if table and reported.input_bytes >= table:
            reasons.append(
                f"its input_bytes ({reported.input_bytes} B) count all of input {index} ({table} B), "
                "which the fusion only gathers rows from"
            )
    if not reasons:
        return None
    return "nvFuser's bandwidth figure is not what the kernel moved: " + "; ".join(reasons)


def flag_bandwidth(record: FusionRecord) -> FusionRecord:
    """``record`` with each suspect kernel's reported bandwidth flagged, and one warning per
    flagged kernel on the record (reports show warnings, not the figures)."""
    if not any(k.reported_bandwidth is not None for k in record.kernels):
        return record
    gathered = gathered_inputs(record.definition)
    kernels = []
    warnings = list(record.warnings)
    for kernel in record.kernels:
        reason = suspect_reason(record, kernel, gathered)
        if reason is not None and kernel.reported_bandwidth is not None:
            kernel = dataclasses.replace(
                kernel, reported_bandwidth=dataclasses.replace(kernel.reported_bandwidth, suspect=reason)
            )
            warnings.append(f"{kernel.normalized_name}: {reason}")
        kernels.append(kernel)
    return dataclasses.replace(record, kernels=tuple(kernels), warnings=tuple(warnings))
