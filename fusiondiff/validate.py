"""Values no recording can produce, refused when a capture is read.

The JSON decoder (:func:`fusiondiff.model.capture_from_jsonable`) checks types; this module checks
that the values are possible: a duration is a finite number of ns, not negative; a shape, stride,
offset or count is not negative; every integer fits in 64 bits. Otherwise a damaged or crafted
capture would flow into the differ, which would then report "FASTER -1.00x" or "comparable".

Each refusal is one :class:`CaptureFormatError` line with the field's path, in the decoder's style
(``live.json.fusions[0].timing.samples_ns[3]: -1.0 is not a duration``). The rules are a table by
record and field, outside the records themselves, so fields can be added to the records freely: a
new integer field is checked to fit in 64 bits and nothing more until a rule names it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

from fusiondiff.conditions import DeviceActivity, GpuProcess, HostTiming, OtherKernel, OtherWork
from fusiondiff.errors import CaptureFormatError
from fusiondiff.model import (
    Capture,
    CommunicationKernel,
    Environment,
    FusionRecord,
    KernelRecord,
    LaunchConfig,
    Segment,
    TensorMeta,
    Timing,
    TimingProtocol,
)

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


def _duration(value: object) -> str | None:
    if isinstance(value, float) and math.isnan(value):
        return "null is not a duration"  # the decoder reads JSON null in a float field as NaN
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or value < 0:
        return f"{value!r} is not a duration"
    return None


def _count(value: object) -> str | None:
    if value is not None and value < 0:  # type: ignore[operator]
        return f"{value!r} is negative"
    return None


def _positive(value: object) -> str | None:
    if value is not None and value < 1:  # type: ignore[operator]
        return f"{value!r} is not a positive count"
    return None


def _finite(value: object) -> str | None:
    if value is not None and not math.isfinite(value):  # type: ignore[arg-type]
        return f"{value!r} is not a finite number"
    return None


def _fraction(value: object) -> str | None:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 1:
        return f"{value!r} is not a fraction between 0 and 1"
    return None


Rule = Callable[[object], "str | None"]

FIELD_RULES: dict[tuple[type, str], Rule] = {
    (Timing, "samples_ns"): _duration,
    (TensorMeta, "index"): _count,
    (TensorMeta, "shape"): _count,
    (TensorMeta, "stride"): _count,
    (TensorMeta, "storage_offset"): _count,
    (TensorMeta, "storage_numel"): _count,
    (TensorMeta, "alignment_bytes"): _count,
    (TensorMeta, "min_value"): _finite,
    (TensorMeta, "max_value"): _finite,
    (LaunchConfig, "grid"): _count,
    (LaunchConfig, "block"): _count,
    (LaunchConfig, "cluster"): _count,
    (LaunchConfig, "shared_mem_bytes"): _count,
    (LaunchConfig, "dynamic_smem_bytes"): _count,
    (LaunchConfig, "static_smem_bytes"): _count,
    (LaunchConfig, "registers_per_thread"): _count,
    (KernelRecord, "group_id"): _count,
    (KernelRecord, "order"): _count,
    (Segment, "group_id"): _count,
    (TimingProtocol, "warmup"): _count,
    (TimingProtocol, "samples"): _count,
    (TimingProtocol, "flush_bytes"): _count,
    (FusionRecord, "call_count"): _positive,
    (FusionRecord, "device_index"): _count,
    (FusionRecord, "sm_clock_mhz"): _count,
    (Environment, "sm_count"): _count,
    (Environment, "l2_bytes"): _count,
    (Environment, "sm_clock_mhz"): _count,
    (Environment, "max_sm_clock_mhz"): _count,
    (Environment, "memory_clock_mhz"): _count,
    (Environment, "rank"): _count,
    (Environment, "local_rank"): _count,
    (Environment, "world_size"): _positive,
    (Environment, "cuda_device_index"): _count,
    (CommunicationKernel, "calls"): _positive,
    (CommunicationKernel, "samples_ns"): _duration,
    (CommunicationKernel, "total_ns"): _duration,
    (CommunicationKernel, "stream"): _count,
    # what the timing ran beside (fusiondiff.conditions, issue #27)
    (OtherKernel, "calls"): _count,
    (OtherKernel, "overlap_ns"): _duration,
    (OtherWork, "overlap_fractions"): _fraction,
    (OtherWork, "kernels_left_out"): _count,
    (OtherWork, "copies"): _count,
    (OtherWork, "copy_overlap_ns"): _duration,
    (GpuProcess, "sm_util_max"): _finite,
    (DeviceActivity, "window_ns"): _duration,
    (DeviceActivity, "processes_listed"): _count,
    (DeviceActivity, "other_process_count"): _count,
    (DeviceActivity, "gpu_util_samples"): _fraction,
    (HostTiming, "execute_ns"): _duration,
    (HostTiming, "session_execute_ns"): _duration,
    (HostTiming, "session_call_ns"): _duration,
}
"""Per record and field, the rule each value must pass (each element, for a tuple)."""


def validate_capture(capture: Capture, origin: str = "capture") -> None:
    """Raise :class:`CaptureFormatError` at the first impossible value in ``capture``."""
    _walk(capture, origin)


def _walk(value: object, where: str) -> None:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            path = f"{where}.{f.name}"
            rule = FIELD_RULES.get((type(value), f.name))
            if rule is not None:
                _apply(rule, item, path)
            _walk(item, path)
        _check_record(value, where)
    elif isinstance(value, tuple):
        for i, item in enumerate(value):
            _walk(item, f"{where}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            _walk(item, f"{where}.{key}")
    elif isinstance(value, int) and not isinstance(value, bool) and not INT64_MIN <= value <= INT64_MAX:
        raise CaptureFormatError(f"{where}: {value} does not fit in 64 bits")


def _apply(rule: Rule, value: object, where: str) -> None:
    if isinstance(value, tuple):
        for i, item in enumerate(value):
            _apply(rule, item, f"{where}[{i}]")
        return
    problem = rule(value)
    if problem:
        raise CaptureFormatError(f"{where}: {problem}")


def _check_record(record: object, where: str) -> None:
    """Rules across the fields of one record."""
    if isinstance(record, CommunicationKernel):
        if record.calls < len(record.samples_ns):
            raise CaptureFormatError(
                f"{where}: {len(record.samples_ns)} samples for {record.calls} call(s): calls counts every sample"
            )
        kept = math.fsum(record.samples_ns)
        if kept > record.total_ns * (1 + 1e-9) + 1e-6:
            raise CaptureFormatError(
                f"{where}: total_ns {record.total_ns!r} is below the sum of its samples ({kept!r})"
            )
    if isinstance(record, TensorMeta):
        if record.kind == "tensor" and len(record.shape) != len(record.stride):
            raise CaptureFormatError(
                f"{where}: shape has {len(record.shape)} dimensions but stride {len(record.stride)}"
            )
        low, high = record.min_value, record.max_value
        if low is not None and high is not None and low > high:
            raise CaptureFormatError(f"{where}: min_value {low!r} is above max_value {high!r}")
