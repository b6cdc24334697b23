"""Synthetic capture records built in code, for tests, benchmarks and examples of the differ.

Nothing here was recorded: every environment says ``synthetic`` in its GPU name and hostname, and
every capture's source starts with ``synthetic``. Samples come from a seeded random generator, so
the same call always builds the same records. Recorded captures live under ``tests/data/``.
"""

from __future__ import annotations

import dataclasses
import json
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fusiondiff.records.definition import definition_hash
from fusiondiff.records.environment import Environment
from fusiondiff.records.kernel_names import parse_kernel_name
from fusiondiff.records.model import (
    Capture,
    CaptureKind,
    FusionRecord,
    KernelRecord,
    LaunchConfig,
    Segment,
    Segmentation,
    TensorMeta,
    Timing,
    TimingProtocol,
)

RMSNORM_DEFINITION = """\
def nvfuser_fusion(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[4, 1024, 4096], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[4096], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.cast(T1, dtype=DataType.Float)
    T8 = fd.ops.broadcast_in_dim(T3, shape=[4, 1024, 4096], broadcast_dims=[2])
    T9 = fd.ops.mul(T2, T2)
    T10 = fd.ops.sum(T9, dims=[2], keepdim=False, dtype=DataType.Null)
    T15 = fd.ops.broadcast_in_dim(T10, shape=[4, 1024, 1], broadcast_dims=[0, 1])
    S16 = fd.define_scalar(4096.00, dtype=DataType.Double)
    S17 = fd.ops.reciprocal(S16)
    T18 = fd.ops.mul(T15, S17)
    S19 = fd.define_scalar(1.00000e-05, dtype=DataType.Double)
    T20 = fd.ops.add(T18, S19)
    T21 = fd.ops.rsqrt(T20)
    T26 = fd.ops.broadcast_in_dim(T21, shape=[4, 1024, 4096], broadcast_dims=[0, 1, 2])
    T27 = fd.ops.mul(T2, T26)
    T28 = fd.ops.mul(T27, T8)
    T29 = fd.ops.cast(T28, dtype=DataType.BFloat16)
    fd.add_output(T21)
    fd.add_output(T29)
"""
"""The seed's RMSNorm fusion ([4, 1024, 4096] bf16), as nvFuser prints it."""

SYNTHETIC_ENVIRONMENT = Environment(
    gpu_name="synthetic GPU (not recorded)",
    compute_capability="9.0",
    sm_count=132,
    l2_bytes=60 * 2**20,
    sm_clock_mhz=1980,
    max_sm_clock_mhz=1980,
    memory_clock_mhz=3201,
    driver_version="synthetic",
    cuda_version="13.0",
    torch_version="2.11.0+cu130",
    nvfuser_version="0.2.36",
    thunder_version="0.2.6",
    python_version="3.11",
    hostname="synthetic",
)
"""An H200-like environment, marked synthetic."""


def samples(median_ns: float, n: int = 30, spread: float = 0.01, seed: int = 0) -> tuple[float, ...]:
    """``n`` seeded normal samples around ``median_ns`` with relative standard deviation ``spread``."""
    rng = np.random.default_rng(seed)
    return tuple(float(v) for v in median_ns * (1.0 + spread * rng.standard_normal(n)))


def kernel(
    scheduler: str = "inner_persistent",
    group_id: int = 0,
    *,
    median_ns: float = 17_420.0,
    n: int = 30,
    seed: int = 0,
    fusion_index: int = 0,
    concretization: int = 1,
    runtime: int = 0,
    order: int | None = None,
    launch: LaunchConfig | None = None,
    source_hash: str | None = None,
    timing: Timing | None = None,
) -> KernelRecord:
    """A kernel named the way nvFuser names them, with seeded samples."""
    name = f"nvfuser_{scheduler}_f{fusion_index}_c{concretization}_r{runtime}_g{group_id}"
    normalized, parsed_scheduler, parsed_group = parse_kernel_name(name)
    return KernelRecord(
        name=name,
        normalized_name=normalized,
        scheduler=parsed_scheduler,
        group_id=parsed_group,
        launch=launch
        or LaunchConfig(grid=(4096, 1, 1), block=(128, 1, 1), shared_mem_bytes=0, registers_per_thread=40),
        timing=timing or Timing(samples_ns=samples(median_ns, n=n, seed=seed)),
        order=group_id if order is None else order,
        source_hash=source_hash,
    )


def tensor(
    index: int,
    shape: Sequence[int],
    dtype: str = "torch.bfloat16",
    *,
    stride: Sequence[int] | None = None,
    storage_offset: int = 0,
    alignment_bytes: int = 256,
    min_value: float | None = None,
    max_value: float | None = None,
) -> TensorMeta:
    """A CUDA tensor input; contiguous strides unless given."""
    shape = tuple(shape)
    stride = tensor_strides(shape) if stride is None else tuple(stride)
    numel = int(np.prod(shape)) if shape else 1
    return TensorMeta(
        index=index,
        kind="tensor",
        dtype=dtype,
        shape=shape,
        stride=stride,
        storage_offset=storage_offset,
        storage_numel=numel + storage_offset,
        device="cuda:0",
        alignment_bytes=alignment_bytes,
        is_contiguous=stride == tensor_strides(shape),
        min_value=min_value,
        max_value=max_value,
    )


def tensor_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Contiguous (row-major) strides of ``shape``."""
    strides, step = [], 1
    for size in reversed(tuple(shape)):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def rmsnorm_inputs() -> tuple[TensorMeta, ...]:
    """The seed RMSNorm's inputs: activations [4, 1024, 4096] and weight [4096], bf16, aligned."""
    return (tensor(0, (4, 1024, 4096)), tensor(1, (4096,)))


def fusion(
    name: str = "nvFusion0",
    *,
    kernels: Sequence[KernelRecord] | None = None,
    inputs: Sequence[TensorMeta] | None = None,
    definition: str = RMSNORM_DEFINITION,
    trace: str | None = "forward",
    **fields: Any,
) -> FusionRecord:
    """A fusion whose timing is, per sample, the sum of its kernels' samples (as recorded ones are).
    ``fields`` sets any other :class:`FusionRecord` field."""
    kernels = tuple(kernels if kernels is not None else (kernel(),))
    segments = tuple(Segment(group_id=k.group_id or 0, scheduler=k.scheduler or "unknown") for k in kernels)
    count = min((k.timing.count for k in kernels), default=0)
    totals = tuple(float(sum(k.timing.samples_ns[i] for k in kernels)) for i in range(count))
    record = FusionRecord(
        name=name,
        definition=definition,
        definition_hash=definition_hash(definition),
        inputs=tuple(inputs if inputs is not None else rmsnorm_inputs()),
        kernels=kernels,
        segmentation=Segmentation(segments=segments),
        timing=Timing(samples_ns=totals),
        trace=trace,
    )
    return dataclasses.replace(record, **fields) if fields else record


def capture(
    fusions: Sequence[FusionRecord],
    *,
    kind: CaptureKind = "live",
    environment: Environment | None = None,
    protocol: TimingProtocol | None = None,
    source: str = "synthetic",
    warnings: Sequence[str] = (),
) -> Capture:
    """A capture of the given fusions in :data:`SYNTHETIC_ENVIRONMENT` under the default protocol."""
    return Capture(
        kind=kind,
        environment=environment or SYNTHETIC_ENVIRONMENT,
        protocol=protocol or TimingProtocol(),
        fusions=tuple(fusions),
        source=source if source.startswith("synthetic") else f"synthetic: {source}",
        warnings=tuple(warnings),
    )


def write_saved_inputs(path: Path, sizes: dict[str, int]) -> None:
    """SYNTHETIC: a safetensors file with a zero-filled uint8 tensor of each byte size, for the
    header a repro reads before its script relies on the file (the scripts are not run)."""
    header, offset = {}, 0
    for key, size in sizes.items():
        header[key] = {"dtype": "U8", "shape": [size], "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + bytes(offset))
