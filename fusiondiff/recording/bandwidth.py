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

import dataclasses
import math

from fusiondiff.records.dtypes import itemsize_bytes
from fusiondiff.records.model import FusionRecord, KernelRecord, TensorMeta
from fusiondiff.records.traffic import gathers


def gathered_inputs(definition: str) -> set[int]:
    """Input positions of the tensors the definition gathers rows from (used as they are)."""
    return {g.table for g in gathers(definition)}


def tensor_bytes(meta: TensorMeta) -> int | None:
    """Bytes of a tensor input's elements (its shape, not its storage); ``None`` for an unknown dtype."""
    size = itemsize_bytes(meta.dtype)
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
