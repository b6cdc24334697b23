# -*- coding: utf-8 -*-
# Written by fusiondiff; nothing from the capture is on these first two lines.
# Repro of fusion forward/nvFusion0/cf93129853f2 (nvFusion0, forward trace, called 2 times),
# written by fusiondiff 0.1.0 from capture .noise_in/live_1.json.
# Recorded at 2026-12-07T16:41:26+00:00 on NVIDIA H100 80GB HBM3 (sm 9.0): driver 580.159.04,
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
    tv0 = fd.define_tensor(shape=[2, 256], contiguity=[True, True], dtype=DataType.Int, is_cpu=False)
    tv1 = fd.define_tensor(shape=[50304, 768], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.define_tensor(shape=[768], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv3 = fd.define_tensor(shape=[768], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv4 = fd.define_tensor(shape=[768], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv5 = fd.define_tensor(shape=[768], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv6 = fd.ops.reshape(tv0, new_shape=[512])
    tv7 = fd.ops.broadcast(tv6, is_broadcast_dim=[False, True])
    tv8 = fd.ops.index_select(tv1, tv7, dim=0)
    tv9 = fd.ops.reshape(tv8, new_shape=[2, 256, 768])
    tv10 = fd.ops.cast(tv9, dtype=DataType.Float)
    tv23, tv24, tv25 = fd.ops.welford(tv10, dims=[2])
    tv29 = fd.ops.broadcast(tv23, is_broadcast_dim=[False, False, True])
    tv30 = fd.ops.cast(tv29, dtype=DataType.Float)
    tv32 = fd.ops.expand(tv30, shape=[2, 256, 768])
    tv34 = fd.ops.sub(tv10, tv32)
    c69 = fd.ops.cast(fd.define_scalar(768, dtype=DataType.Index), dtype=DataType.Double)
    c71 = fd.ops.mul(1.00000, c69)
    c75 = fd.ops.cast(0, dtype=DataType.Double)
    c77 = fd.ops.sub(c71, c75)
    c79 = fd.ops.cast(0, dtype=DataType.Double)
    c81 = fd.ops.ge(c77, c79)
    c83 = fd.ops.cast(0, dtype=DataType.Double)
    c85 = fd.ops.where(c81, c77, c83)
    c90 = fd.ops.reciprocal(c85)
    tv26 = fd.ops.mul(tv24, c90)
    tv27 = fd.ops.broadcast(tv26, is_broadcast_dim=[False, False, True])
    tv28 = fd.ops.cast(tv27, dtype=DataType.Float)
    tv31 = fd.ops.add(tv28, 1.00000e-05)
    tv33 = fd.ops.rsqrt(tv31)
    tv35 = fd.ops.expand(tv33, shape=[2, 256, 768])
    tv36 = fd.ops.mul(tv34, tv35)
    tv11 = fd.ops.broadcast(tv2, is_broadcast_dim=[True, True, False])
    tv12 = fd.ops.expand(tv11, shape=[2, 256, 768])
    tv13 = fd.ops.cast(tv12, dtype=DataType.Float)
    tv37 = fd.ops.mul(tv36, tv13)
    tv14 = fd.ops.broadcast(tv3, is_broadcast_dim=[True, True, False])
    tv15 = fd.ops.expand(tv14, shape=[2, 256, 768])
    tv16 = fd.ops.cast(tv15, dtype=DataType.Float)
    tv39 = fd.ops.add(tv37, tv16)
    tv41 = fd.ops.cast(tv39, dtype=DataType.BFloat16)
    tv17 = fd.ops.broadcast(tv4, is_broadcast_dim=[True, True, False])
    tv18 = fd.ops.expand(tv17, shape=[2, 256, 768])
    tv19 = fd.ops.cast(tv18, dtype=DataType.Float)
    tv38 = fd.ops.mul(tv36, tv19)
    tv20 = fd.ops.broadcast(tv5, is_broadcast_dim=[True, True, False])
    tv21 = fd.ops.expand(tv20, shape=[2, 256, 768])
    tv22 = fd.ops.cast(tv21, dtype=DataType.Float)
    tv40 = fd.ops.add(tv38, tv22)
    tv42 = fd.ops.cast(tv40, dtype=DataType.BFloat16)
    fd.add_output(tv9)
    fd.add_output(tv23)
    fd.add_output(tv33)
    fd.add_output(tv41)
    fd.add_output(tv42)


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


def pin_range(tensor, low, high):
    """Write ``low`` and ``high`` into the view's first and last elements."""
    # A random draw rarely hits the recorded extremes: with them written in, the input holds
    # exactly the recorded value range (so a replay records the same range).
    if tensor.dim() == 0 or tensor.numel() == 0:
        return
    tensor[(0,) * tensor.dim()] = low
    tensor[tuple(size - 1 for size in tensor.shape)] = high


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
# input 0: torch.int64 shape (2, 256) stride (256, 1), storage offset 0, values 42..50076
inputs.append(synthesize_storage(512, torch.int64, 'cuda:0', 42, 50076).as_strided((2, 256), (256, 1), 0))
pin_range(inputs[-1], 42, 50076)
check_alignment(0, inputs[-1], 256)
# input 1: torch.bfloat16 shape (50304, 768) stride (768, 1), storage offset 0
inputs.append(synthesize_storage(38633472, torch.bfloat16, 'cuda:0').as_strided((50304, 768), (768, 1), 0))
check_alignment(1, inputs[-1], 256)
# input 2: torch.bfloat16 shape (768,) stride (1,), storage offset 0
inputs.append(synthesize_storage(768, torch.bfloat16, 'cuda:0').as_strided((768,), (1,), 0))
check_alignment(2, inputs[-1], 256)
# input 3: torch.bfloat16 shape (768,) stride (1,), storage offset 0
inputs.append(synthesize_storage(768, torch.bfloat16, 'cuda:0').as_strided((768,), (1,), 0))
check_alignment(3, inputs[-1], 256)
# input 4: torch.bfloat16 shape (768,) stride (1,), storage offset 0
inputs.append(synthesize_storage(768, torch.bfloat16, 'cuda:0').as_strided((768,), (1,), 0))
check_alignment(4, inputs[-1], 256)
# input 5: torch.bfloat16 shape (768,) stride (1,), storage offset 0
inputs.append(synthesize_storage(768, torch.bfloat16, 'cuda:0').as_strided((768,), (1,), 0))
check_alignment(5, inputs[-1], 256)

# The per-call options the recording passed (Thunder passes them; nvFuser's repro drops them).
outputs = fd.execute(inputs, _enable_options=[], _disable_options=[])
torch.cuda.synchronize()
