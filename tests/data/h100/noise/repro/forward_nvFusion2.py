# -*- coding: utf-8 -*-
# Written by fusiondiff; nothing from the capture is on these first two lines.
# Repro of fusion forward/nvFusion2/25e0e65b65b5 (nvFusion2, forward trace, called 2 times),
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
    tv0 = fd.define_tensor(shape=[2, 256, 768], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv1 = fd.define_tensor(shape=[2, 256, 768], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.define_tensor(shape=[2, 256, 768], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv3 = fd.define_tensor(shape=[768], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv4 = fd.define_tensor(shape=[768], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv5 = fd.define_tensor(shape=[768], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv6 = fd.define_tensor(shape=[768], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv10 = fd.ops.cast(tv2, dtype=DataType.Float)
    tv8 = fd.ops.cast(tv1, dtype=DataType.Float)
    tv7 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv9 = fd.ops.add(tv8, tv7)
    tv11 = fd.ops.add(tv10, tv9)
    tv12 = fd.ops.cast(tv11, dtype=DataType.BFloat16)
    tv13, tv14, tv15 = fd.ops.welford(tv11, dims=[2])
    tv19 = fd.ops.broadcast(tv13, is_broadcast_dim=[False, False, True])
    tv20 = fd.ops.cast(tv19, dtype=DataType.Float)
    tv23 = fd.ops.expand(tv20, shape=[2, 256, 768])
    tv27 = fd.ops.sub(tv11, tv23)
    c70 = fd.ops.cast(fd.define_scalar(768, dtype=DataType.Index), dtype=DataType.Double)
    c72 = fd.ops.mul(1.00000, c70)
    c76 = fd.ops.cast(0, dtype=DataType.Double)
    c78 = fd.ops.sub(c72, c76)
    c80 = fd.ops.cast(0, dtype=DataType.Double)
    c82 = fd.ops.ge(c78, c80)
    c84 = fd.ops.cast(0, dtype=DataType.Double)
    c86 = fd.ops.where(c82, c78, c84)
    c92 = fd.ops.reciprocal(c86)
    tv16 = fd.ops.mul(tv14, c92)
    tv17 = fd.ops.broadcast(tv16, is_broadcast_dim=[False, False, True])
    tv18 = fd.ops.cast(tv17, dtype=DataType.Float)
    tv21 = fd.ops.add(tv18, 1.00000e-05)
    tv22 = fd.ops.rsqrt(tv21)
    tv26 = fd.ops.expand(tv22, shape=[2, 256, 768])
    tv33 = fd.ops.mul(tv27, tv26)
    tv24 = fd.ops.broadcast(tv3, is_broadcast_dim=[True, True, False])
    tv25 = fd.ops.expand(tv24, shape=[2, 256, 768])
    tv32 = fd.ops.cast(tv25, dtype=DataType.Float)
    tv38 = fd.ops.mul(tv33, tv32)
    tv30 = fd.ops.broadcast(tv5, is_broadcast_dim=[True, True, False])
    tv31 = fd.ops.expand(tv30, shape=[2, 256, 768])
    tv37 = fd.ops.cast(tv31, dtype=DataType.Float)
    tv41 = fd.ops.add(tv38, tv37)
    tv43 = fd.ops.cast(tv41, dtype=DataType.BFloat16)
    tv28 = fd.ops.broadcast(tv4, is_broadcast_dim=[True, True, False])
    tv29 = fd.ops.expand(tv28, shape=[2, 256, 768])
    tv36 = fd.ops.cast(tv29, dtype=DataType.Float)
    tv40 = fd.ops.mul(tv33, tv36)
    tv34 = fd.ops.broadcast(tv6, is_broadcast_dim=[True, True, False])
    tv35 = fd.ops.expand(tv34, shape=[2, 256, 768])
    tv39 = fd.ops.cast(tv35, dtype=DataType.Float)
    tv42 = fd.ops.add(tv40, tv39)
    tv44 = fd.ops.cast(tv42, dtype=DataType.BFloat16)
    fd.add_output(tv12)
    fd.add_output(tv13)
    fd.add_output(tv22)
    fd.add_output(tv43)
    fd.add_output(tv44)


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
# input 0: torch.bfloat16 shape (2, 256, 768) stride (196608, 768, 1), storage offset 0
inputs.append(synthesize_storage(393216, torch.bfloat16, 'cuda:0').as_strided((2, 256, 768), (196608, 768, 1), 0))
check_alignment(0, inputs[-1], 256)
# input 1: torch.bfloat16 shape (2, 256, 768) stride (196608, 768, 1), storage offset 0
inputs.append(synthesize_storage(393216, torch.bfloat16, 'cuda:0').as_strided((2, 256, 768), (196608, 768, 1), 0))
check_alignment(1, inputs[-1], 256)
# input 2: torch.bfloat16 shape (2, 256, 768) stride (196608, 768, 1), storage offset 0
inputs.append(synthesize_storage(393216, torch.bfloat16, 'cuda:0').as_strided((2, 256, 768), (196608, 768, 1), 0))
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
# input 6: torch.bfloat16 shape (768,) stride (1,), storage offset 0
inputs.append(synthesize_storage(768, torch.bfloat16, 'cuda:0').as_strided((768,), (1,), 0))
check_alignment(6, inputs[-1], 256)

# The per-call options the recording passed (Thunder passes them; nvFuser's repro drops them).
outputs = fd.execute(inputs, _enable_options=[], _disable_options=[])
torch.cuda.synchronize()
