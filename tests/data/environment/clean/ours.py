# Repro of fusion forward/nvFusion0/0fab1fb76d29 (nvFusion0, forward trace, called 3 times),
# written by fusiondiff 0.1.0 from capture /tmp/env/clean/live.json.
# Recorded at 2026-12-01T22:22:42+00:00 on NVIDIA H200 (sm 9.0): driver 580.159.04,
#   CUDA 13.0, torch 2.11.0+cu130, nvFuser 0.2.36+git7e04d26, Thunder 0.2.6.
# It keeps what nvFuser's repro_script_for drops: the NVFUSER_* variables, each input's storage
# offset (so its pointer alignment), strides and integer value range, the enable/disable options
# and the constants' full precision.
# Needs torch and nvfuser_direct.

import os
import sys
from pathlib import Path

# nvFuser reads NVFUSER_* when it starts, so they are set before nvfuser_direct is imported.
RECORDED_NVFUSER_ENV = []
for _name in sorted(os.environ):
    if _name.startswith('NVFUSER_') and _name not in RECORDED_NVFUSER_ENV:
        print(f'warning: {_name} is set here but was not set in the recording', file=sys.stderr)

import torch
from nvfuser_direct import FusionDefinition, DataType

# 1 integer literal(s) defined as DataType.Index scalars, as in the recorded fusion (printed bare, they would rebuild as Int and add casts).
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[32768, 8192], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv1 = fd.define_tensor(shape=[8192], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.define_tensor(shape=[8192], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv3 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv4, tv5, tv6 = fd.ops.welford(tv3, dims=[1])
    tv10 = fd.ops.broadcast(tv4, is_broadcast_dim=[False, True])
    tv11 = fd.ops.cast(tv10, dtype=DataType.Float)
    tv14 = fd.ops.expand(tv11, shape=[32768, 8192])
    tv15 = fd.ops.sub(tv3, tv14)
    c15 = fd.ops.cast(fd.define_scalar(8192, dtype=DataType.Index), dtype=DataType.Double)
    c17 = fd.ops.mul(1.00000, c15)
    c21 = fd.ops.cast(0, dtype=DataType.Double)
    c23 = fd.ops.sub(c17, c21)
    c25 = fd.ops.cast(0, dtype=DataType.Double)
    c27 = fd.ops.ge(c23, c25)
    c29 = fd.ops.cast(0, dtype=DataType.Double)
    c31 = fd.ops.where(c27, c23, c29)
    c37 = fd.ops.reciprocal(c31)
    tv7 = fd.ops.mul(tv5, c37)
    tv8 = fd.ops.broadcast(tv7, is_broadcast_dim=[False, True])
    tv9 = fd.ops.cast(tv8, dtype=DataType.Float)
    tv12 = fd.ops.add(tv9, 1.00000e-05)
    tv13 = fd.ops.rsqrt(tv12)
    tv16 = fd.ops.expand(tv13, shape=[32768, 8192])
    tv17 = fd.ops.mul(tv15, tv16)
    tv18 = fd.ops.broadcast(tv1, is_broadcast_dim=[True, False])
    tv19 = fd.ops.expand(tv18, shape=[32768, 8192])
    tv20 = fd.ops.cast(tv19, dtype=DataType.Float)
    tv21 = fd.ops.mul(tv17, tv20)
    tv22 = fd.ops.broadcast(tv2, is_broadcast_dim=[True, False])
    tv23 = fd.ops.expand(tv22, shape=[32768, 8192])
    tv24 = fd.ops.cast(tv23, dtype=DataType.Float)
    tv25 = fd.ops.add(tv21, tv24)
    tv26 = fd.ops.neg(tv25)
    tv27 = fd.ops.exp(tv26)
    tv28 = fd.ops.add(1.00000, tv27)
    tv29 = fd.ops.reciprocal(tv28)
    tv30 = fd.ops.mul(tv25, tv29)
    tv31 = fd.ops.cast(tv30, dtype=DataType.BFloat16)
    fd.add_output(tv31)


with FusionDefinition() as fd:
    nvfuser_fusion(fd)


def synthesize_storage(numel, dtype, device, low=0, high=9):
    """A fresh flat storage of ``numel`` random values; integers in ``[low, high]``."""
    import torch

    # A fresh storage: the caching allocator aligns it to 512 bytes, so the recorded storage
    # offset alone gives the data pointer the alignment it had in the recording.
    if dtype.is_floating_point or dtype.is_complex:
        # randn has no kernels for 1-byte floats: draw in float32 and convert.
        draw = dtype if dtype.itemsize > 1 else torch.float32
        return torch.randn(numel, dtype=draw, device=device).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, (numel,), device=device).bool()
    return torch.randint(low, high + 1, (numel,), dtype=dtype, device=device)


def alignment_of(address: int, cap: int = 256) -> int:
    """Largest power of two dividing ``address``, at most ``cap`` (0 aligns to everything)."""
    if address == 0:
        return cap
    return min(address & -address, cap)


def check_alignment(index, tensor, recorded):
    """Warn on stderr when an input's data pointer is aligned otherwise than in the recording."""
    # nvFuser vectorizes by the alignment, so another alignment can mean another kernel.
    got = alignment_of(tensor.data_ptr())
    if got != recorded:
        print(f"warning: input {index} is {got}-byte aligned; in the recording it was {recorded}", file=sys.stderr)


inputs = []
# input 0: torch.bfloat16 shape (32768, 8192) stride (8192, 1), storage offset 0
inputs.append(synthesize_storage(268435456, torch.bfloat16, 'cuda:0').as_strided((32768, 8192), (8192, 1), 0))
check_alignment(0, inputs[-1], 256)
# input 1: torch.bfloat16 shape (8192,) stride (1,), storage offset 0
inputs.append(synthesize_storage(8192, torch.bfloat16, 'cuda:0').as_strided((8192,), (1,), 0))
check_alignment(1, inputs[-1], 256)
# input 2: torch.bfloat16 shape (8192,) stride (1,), storage offset 0
inputs.append(synthesize_storage(8192, torch.bfloat16, 'cuda:0').as_strided((8192,), (1,), 0))
check_alignment(2, inputs[-1], 256)

# The per-call options the recording passed (Thunder passes them; nvFuser's repro drops them).
outputs = fd.execute(inputs, _enable_options=[], _disable_options=[])
torch.cuda.synchronize()
