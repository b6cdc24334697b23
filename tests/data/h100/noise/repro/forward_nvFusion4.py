# -*- coding: utf-8 -*-
# Written by fusiondiff; nothing from the capture is on these first two lines.
# Repro of fusion forward/nvFusion4/301423d910c4 (nvFusion4, forward trace, called 2 times),
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
    tv8 = fd.ops.cast(tv2, dtype=DataType.Float)
    tv6 = fd.ops.cast(tv1, dtype=DataType.Float)
    tv5 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv7 = fd.ops.add(tv6, tv5)
    tv9 = fd.ops.add(tv8, tv7)
    tv10 = fd.ops.cast(tv9, dtype=DataType.BFloat16)
    tv11, tv12, tv13 = fd.ops.welford(tv9, dims=[2])
    tv17 = fd.ops.broadcast(tv11, is_broadcast_dim=[False, False, True])
    tv18 = fd.ops.cast(tv17, dtype=DataType.Float)
    tv21 = fd.ops.expand(tv18, shape=[2, 256, 768])
    tv25 = fd.ops.sub(tv9, tv21)
    c66 = fd.ops.cast(fd.define_scalar(768, dtype=DataType.Index), dtype=DataType.Double)
    c68 = fd.ops.mul(1.00000, c66)
    c72 = fd.ops.cast(0, dtype=DataType.Double)
    c74 = fd.ops.sub(c68, c72)
    c76 = fd.ops.cast(0, dtype=DataType.Double)
    c78 = fd.ops.ge(c74, c76)
    c80 = fd.ops.cast(0, dtype=DataType.Double)
    c82 = fd.ops.where(c78, c74, c80)
    c88 = fd.ops.reciprocal(c82)
    tv14 = fd.ops.mul(tv12, c88)
    tv15 = fd.ops.broadcast(tv14, is_broadcast_dim=[False, False, True])
    tv16 = fd.ops.cast(tv15, dtype=DataType.Float)
    tv19 = fd.ops.add(tv16, 1.00000e-05)
    tv20 = fd.ops.rsqrt(tv19)
    tv24 = fd.ops.expand(tv20, shape=[2, 256, 768])
    tv29 = fd.ops.mul(tv25, tv24)
    tv22 = fd.ops.broadcast(tv3, is_broadcast_dim=[True, True, False])
    tv23 = fd.ops.expand(tv22, shape=[2, 256, 768])
    tv28 = fd.ops.cast(tv23, dtype=DataType.Float)
    tv31 = fd.ops.mul(tv29, tv28)
    tv26 = fd.ops.broadcast(tv4, is_broadcast_dim=[True, True, False])
    tv27 = fd.ops.expand(tv26, shape=[2, 256, 768])
    tv30 = fd.ops.cast(tv27, dtype=DataType.Float)
    tv32 = fd.ops.add(tv31, tv30)
    tv33 = fd.ops.cast(tv32, dtype=DataType.BFloat16)
    fd.add_output(tv10)
    fd.add_output(tv11)
    fd.add_output(tv20)
    fd.add_output(tv33)


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

# The per-call options the recording passed (Thunder passes them; nvFuser's repro drops them).
outputs = fd.execute(inputs, _enable_options=[], _disable_options=[])
torch.cuda.synchronize()
