# -*- coding: utf-8 -*-
# Written by fusiondiff; nothing from the capture is on these first two lines.
# Repro of fusion backward/nvFusion5/4d44b883fc70 (nvFusion5, backward trace, called 2 times),
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

# Constants nvFuser printed with 6 significant digits, restored from the recorded exact values:
#   0.00130208 -> 0.0013020833333333333
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[2, 256], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    tv1 = fd.define_tensor(shape=[512, 768], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.define_tensor(shape=[768], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv3 = fd.define_tensor(shape=[2, 256, 768], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv4 = fd.define_tensor(shape=[2, 256, 1], contiguity=[True, True, None], dtype=DataType.Float, is_cpu=False)
    tv18 = fd.ops.expand(tv4, shape=[2, 256, 768])
    tv8 = fd.ops.broadcast(tv2, is_broadcast_dim=[True, True, False])
    tv9 = fd.ops.expand(tv8, shape=[2, 256, 768])
    tv11 = fd.ops.cast(tv9, dtype=DataType.Float)
    tv7 = fd.ops.reshape(tv1, new_shape=[2, 256, 768])
    tv10 = fd.ops.cast(tv7, dtype=DataType.Float)
    tv14 = fd.ops.mul(tv11, tv10)
    tv19 = fd.ops.mul(tv18, tv14)
    tv22 = fd.ops.neg(tv19)
    tv26 = fd.ops.sum(tv22, dims=[2], dtype=DataType.Float)
    tv28 = fd.ops.broadcast(tv26, is_broadcast_dim=[False, False, True])
    tv29 = fd.ops.cast(tv28, dtype=DataType.Float)
    tv34 = fd.ops.squeeze(tv29, dims=[2])
    tv39 = fd.ops.broadcast(tv34, is_broadcast_dim=[False, False, True])
    tv40 = fd.ops.cast(tv39, dtype=DataType.Float)
    tv42 = fd.ops.expand(tv40, shape=[2, 256, 768])
    tv44 = fd.ops.mul(0.0013020833333333333, tv42)
    tv13 = fd.ops.cast(tv3, dtype=DataType.Float)
    tv5 = fd.ops.broadcast(tv0, is_broadcast_dim=[False, False, True])
    tv6 = fd.ops.cast(tv5, dtype=DataType.Float)
    tv12 = fd.ops.expand(tv6, shape=[2, 256, 768])
    tv15 = fd.ops.sub(tv13, tv12)
    tv16 = fd.ops.mul(tv15, tv14)
    tv17 = fd.ops.sum(tv16, dims=[2], dtype=DataType.Float)
    tv20 = fd.ops.broadcast(tv17, is_broadcast_dim=[False, False, True])
    tv21 = fd.ops.cast(tv20, dtype=DataType.Float)
    tv24 = fd.ops.mul(-0.500000, tv21)
    tv23 = fd.ops.pow(tv4, 3.00000)
    tv25 = fd.ops.mul(tv24, tv23)
    tv27 = fd.ops.squeeze(tv25, dims=[2])
    tv32 = fd.ops.broadcast(tv27, is_broadcast_dim=[False, False, True])
    tv33 = fd.ops.cast(tv32, dtype=DataType.Float)
    tv36 = fd.ops.expand(tv33, shape=[2, 256, 768])
    tv38 = fd.ops.mul(2.00000, tv36)
    tv30 = fd.ops.broadcast(tv0, is_broadcast_dim=[False, False, True])
    tv31 = fd.ops.cast(tv30, dtype=DataType.Float)
    tv35 = fd.ops.expand(tv31, shape=[2, 256, 768])
    tv37 = fd.ops.sub(tv13, tv35)
    tv41 = fd.ops.mul(tv38, tv37)
    c193 = fd.ops.reciprocal(768.000)
    tv43 = fd.ops.mul(tv41, c193)
    tv45 = fd.ops.add(tv44, tv43)
    tv46 = fd.ops.add(tv19, tv45)
    tv47 = fd.ops.cast(tv46, dtype=DataType.BFloat16)
    tv51 = fd.ops.reshape(tv47, new_shape=[512, 768])
    tv55 = fd.ops.permute(tv51, dims=[1, 0])
    tv52 = fd.ops.sum(tv46, dims=[0, 1], dtype=DataType.Float)
    tv56 = fd.ops.cast(tv52, dtype=DataType.BFloat16)
    tv48 = fd.ops.mul(tv15, tv18)
    tv49 = fd.ops.mul(tv48, tv10)
    tv53 = fd.ops.sum(tv49, dims=[0, 1], dtype=DataType.Float)
    tv57 = fd.ops.cast(tv53, dtype=DataType.BFloat16)
    tv50 = fd.ops.cast(tv7, dtype=DataType.Float)
    tv54 = fd.ops.sum(tv50, dims=[0, 1], dtype=DataType.Float)
    tv58 = fd.ops.cast(tv54, dtype=DataType.BFloat16)
    fd.add_output(tv55)
    fd.add_output(tv56)
    fd.add_output(tv51)
    fd.add_output(tv47)
    fd.add_output(tv57)
    fd.add_output(tv58)


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
# input 0: torch.float32 shape (2, 256) stride (256, 1), storage offset 0
inputs.append(synthesize_storage(512, torch.float32, 'cuda:0').as_strided((2, 256), (256, 1), 0))
check_alignment(0, inputs[-1], 256)
# input 1: torch.bfloat16 shape (512, 768) stride (768, 1), storage offset 0
inputs.append(synthesize_storage(393216, torch.bfloat16, 'cuda:0').as_strided((512, 768), (768, 1), 0))
check_alignment(1, inputs[-1], 256)
# input 2: torch.bfloat16 shape (768,) stride (1,), storage offset 0
inputs.append(synthesize_storage(768, torch.bfloat16, 'cuda:0').as_strided((768,), (1,), 0))
check_alignment(2, inputs[-1], 256)
# input 3: torch.bfloat16 shape (2, 256, 768) stride (196608, 768, 1), storage offset 0
inputs.append(synthesize_storage(393216, torch.bfloat16, 'cuda:0').as_strided((2, 256, 768), (196608, 768, 1), 0))
check_alignment(3, inputs[-1], 256)
# input 4: torch.float32 shape (2, 256, 1) stride (256, 1, 1), storage offset 0
inputs.append(synthesize_storage(512, torch.float32, 'cuda:0').as_strided((2, 256, 1), (256, 1, 1), 0))
check_alignment(4, inputs[-1], 256)

# The per-call options the recording passed (Thunder passes them; nvFuser's repro drops them).
outputs = fd.execute(inputs, _enable_options=[], _disable_options=[])
torch.cuda.synchronize()
