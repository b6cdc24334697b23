# -*- coding: utf-8 -*-
# Written by fusiondiff; nothing from the capture is on these first two lines.
# Repro of fusion forward/nvFusion0/c33ab3df5075 (nvFusion0, forward trace, called 3 times),
# written by fusiondiff 0.1.0 from capture /tmp/b1/clean/live.json.
# Recorded at 2026-12-03T05:26:28+00:00 on NVIDIA H200 (sm 9.0): driver 580.159.04,
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

# Constants nvFuser printed with 6 significant digits, restored from the recorded exact values:
#   0.797885 -> 0.7978845608028654
# 1 integer literal(s) defined as DataType.Index scalars, as in the recorded fusion (printed bare, they would rebuild as Int and add casts).
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[16384, 6144], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv1 = fd.define_tensor(shape=[6144], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.define_tensor(shape=[6144], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv3 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv6 = fd.ops.mul(0.500000, tv3)
    tv4 = fd.ops.mul(tv3, tv3)
    tv5 = fd.ops.mul(tv4, tv3)
    tv7 = fd.ops.mul(0.0447150, tv5)
    tv8 = fd.ops.add(tv3, tv7)
    tv9 = fd.ops.mul(0.7978845608028654, tv8)
    tv10 = fd.ops.tanh(tv9)
    tv11 = fd.ops.add(1.00000, tv10)
    tv12 = fd.ops.mul(tv6, tv11)
    tv13 = fd.ops.neg(tv3)
    tv14 = fd.ops.exp(tv13)
    tv15 = fd.ops.add(1.00000, tv14)
    tv16 = fd.ops.reciprocal(tv15)
    tv17 = fd.ops.mul(tv12, tv16)
    tv18, tv19, tv20 = fd.ops.welford(tv17, dims=[1])
    tv24 = fd.ops.broadcast(tv18, is_broadcast_dim=[False, True])
    tv25 = fd.ops.cast(tv24, dtype=DataType.Float)
    tv28 = fd.ops.expand(tv25, shape=[16384, 6144])
    tv29 = fd.ops.sub(tv17, tv28)
    c90 = fd.ops.cast(fd.define_scalar(6144, dtype=DataType.Index), dtype=DataType.Double)
    c92 = fd.ops.mul(1.00000, c90)
    c96 = fd.ops.cast(0, dtype=DataType.Double)
    c98 = fd.ops.sub(c92, c96)
    c100 = fd.ops.cast(0, dtype=DataType.Double)
    c102 = fd.ops.ge(c98, c100)
    c104 = fd.ops.cast(0, dtype=DataType.Double)
    c106 = fd.ops.where(c102, c98, c104)
    c112 = fd.ops.reciprocal(c106)
    tv21 = fd.ops.mul(tv19, c112)
    tv22 = fd.ops.broadcast(tv21, is_broadcast_dim=[False, True])
    tv23 = fd.ops.cast(tv22, dtype=DataType.Float)
    tv26 = fd.ops.add(tv23, 1.00000e-05)
    tv27 = fd.ops.rsqrt(tv26)
    tv30 = fd.ops.expand(tv27, shape=[16384, 6144])
    tv31 = fd.ops.mul(tv29, tv30)
    tv32 = fd.ops.broadcast(tv1, is_broadcast_dim=[True, False])
    tv33 = fd.ops.expand(tv32, shape=[16384, 6144])
    tv34 = fd.ops.cast(tv33, dtype=DataType.Float)
    tv35 = fd.ops.mul(tv31, tv34)
    tv36 = fd.ops.broadcast(tv2, is_broadcast_dim=[True, False])
    tv37 = fd.ops.expand(tv36, shape=[16384, 6144])
    tv38 = fd.ops.cast(tv37, dtype=DataType.Float)
    tv39 = fd.ops.add(tv35, tv38)
    tv40 = fd.ops.max(tv39, dims=[1])
    tv41 = fd.ops.broadcast(tv40, is_broadcast_dim=[False, True])
    tv42 = fd.ops.cast(tv41, dtype=DataType.Float)
    tv43 = fd.ops.expand(tv42, shape=[16384, 6144])
    tv44 = fd.ops.sub(tv39, tv43)
    tv45 = fd.ops.exp(tv44)
    tv46 = fd.ops.sum(tv45, dims=[1], dtype=DataType.Float)
    tv47 = fd.ops.broadcast(tv46, is_broadcast_dim=[False, True])
    tv48 = fd.ops.cast(tv47, dtype=DataType.Float)
    tv49 = fd.ops.expand(tv48, shape=[16384, 6144])
    tv50 = fd.ops.reciprocal(tv49)
    tv51 = fd.ops.mul(tv45, tv50)
    tv52 = fd.ops.cast(tv51, dtype=DataType.BFloat16)
    fd.add_output(tv52)


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
# input 0: torch.bfloat16 shape (16384, 6144) stride (6144, 1), storage offset 0
inputs.append(synthesize_storage(100663296, torch.bfloat16, 'cuda:0').as_strided((16384, 6144), (6144, 1), 0))
check_alignment(0, inputs[-1], 256)
# input 1: torch.bfloat16 shape (6144,) stride (1,), storage offset 0
inputs.append(synthesize_storage(6144, torch.bfloat16, 'cuda:0').as_strided((6144,), (1,), 0))
check_alignment(1, inputs[-1], 256)
# input 2: torch.bfloat16 shape (6144,) stride (1,), storage offset 0
inputs.append(synthesize_storage(6144, torch.bfloat16, 'cuda:0').as_strided((6144,), (1,), 0))
check_alignment(2, inputs[-1], 256)

# The per-call options the recording passed (Thunder passes them; nvFuser's repro drops them).
outputs = fd.execute(inputs, _enable_options=[], _disable_options=[])
torch.cuda.synchronize()
