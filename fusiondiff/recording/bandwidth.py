"""Judging nvFuser's bandwidth figures: flagged where they are wrong by construction, never repeated.

nvFuser's ``PythonProfiler`` computes a kernel's bandwidth as ``(input_bytes + output_bytes) / time``
with every input tensor counted whole. A gather (``index_select``, ``take_along_axis``, ``gather``,
``embedding_fwd``) reads only the rows it indexes, so an embedding lookup into a 1 GB table was
credited with 47,657 GB/s, 990 % of the H200's peak (seen). Two checks, both from the record alone:

- above 100 % of peak: impossible for DRAM traffic, whatever the cause;
- a gathered-from input counted whole: the kernel's ``input_bytes`` are at least the size of a
  tensor that the definition only gathers from (:func:`fusiondiff.records.traffic.counted_whole`,
  which the byte counts of :mod:`fusiondiff.records.traffic` read too).
"""

from __future__ import annotations

import dataclasses

from fusiondiff.records.model import FusionRecord, KernelRecord
from fusiondiff.records.traffic import counted_whole


def suspect_reason(record: FusionRecord, kernel: KernelRecord) -> str | None:
    """Why ``kernel``'s reported bandwidth is wrong by construction, or ``None``."""
    reported = kernel.reported_bandwidth
    if reported is None:
        return None
    reasons = []
    if reported.percent_of_peak > 100.0:
        reasons.append(f"{reported.percent_of_peak:.0f} % of peak is above what DRAM can deliver")
    for gather, table in sorted(counted_whole(record, reported.input_bytes), key=lambda found: found[0].table):
        reasons.append(
            f"its input_bytes ({reported.input_bytes} B) count all of input {gather.table} ({table} B), "
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
    kernels = []
    warnings = list(record.warnings)
    for kernel in record.kernels:
        reason = suspect_reason(record, kernel)
        if reason is not None and kernel.reported_bandwidth is not None:
            kernel = dataclasses.replace(
                kernel, reported_bandwidth=dataclasses.replace(kernel.reported_bandwidth, suspect=reason)
            )
            warnings.append(f"{kernel.normalized_name}: {reason}")
        kernels.append(kernel)
    return dataclasses.replace(record, kernels=tuple(kernels), warnings=tuple(warnings))
