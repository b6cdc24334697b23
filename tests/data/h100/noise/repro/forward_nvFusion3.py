# -*- coding: utf-8 -*-
# Written by fusiondiff; nothing from the capture is on these first two lines.
# Repro of fusion forward/nvFusion3/9483b0769041 (nvFusion3, forward trace, called 2 times),
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
#   1.41421 -> 1.4142135623730951
# 8 integer literal(s) defined as DataType.Index scalars, as in the recorded fusion (printed bare, they would rebuild as Int and add casts).
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[2, 256, 2304], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv1 = fd.define_tensor(shape=[2, 256, 3072], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.define_tensor(shape=[2, 12, 256, 16], contiguity=[None, None, True, True], dtype=DataType.Float, is_cpu=False)
    tv3 = fd.define_tensor(shape=[2, 12, 256, 16], contiguity=[None, None, True, True], dtype=DataType.Float, is_cpu=False)
    tv6 = fd.ops.slice(tv0, start_indices=[0, 0, 1536], end_indices=[2, 256, 2304], strides=[1, 1, 1], manual_normalization=True)
    tv9 = fd.ops.reshape(tv6, new_shape=[2, 256, 12, 64])
    tv14 = fd.ops.permute(tv9, dims=[0, 2, 1, 3])
    tv4 = fd.ops.slice(tv0, start_indices=[0, 0, 0], end_indices=[2, 256, 768], strides=[1, 1, 1], manual_normalization=True)
    tv7 = fd.ops.reshape(tv4, new_shape=[2, 256, 12, 64])
    tv12 = fd.ops.permute(tv7, dims=[0, 2, 1, 3])
    tv16 = fd.ops.slice(tv12, start_indices=[0, 0, 0, 0], end_indices=[2, 12, 256, 16], strides=[1, 1, 1, 1], manual_normalization=True)
    tv22 = fd.ops.cast(tv16, dtype=DataType.Float)
    tv35 = fd.ops.mul(tv22, tv2)
    tv18 = fd.ops.slice(tv16, start_indices=[0, 0, 0, 8], end_indices=[2, 12, 256, 16], strides=[1, 1, 1, 1], manual_normalization=True)
    tv19 = fd.ops.cast(tv18, dtype=DataType.Float)
    tv20 = fd.ops.neg(tv19)
    tv21 = fd.ops.cast(tv20, dtype=DataType.BFloat16)
    c486 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv32 = fd.ops.pad(tv21, pad_widths=[0, 8, 0, 0, 0, 0, 0, 0], value=c486)
    tv17 = fd.ops.slice(tv16, start_indices=[0, 0, 0, 0], end_indices=[2, 12, 256, 8], strides=[1, 1, 1, 1], manual_normalization=True)
    c484 = fd.ops.add(fd.define_scalar(0, dtype=DataType.Index), fd.define_scalar(8, dtype=DataType.Index))
    c499 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv33 = fd.ops.pad(tv17, pad_widths=[c484, 0, 0, 0, 0, 0, 0, 0], value=c499)
    tv34 = fd.ops.cat([tv32, tv33], dim=3, manual_padding=True)
    tv41 = fd.ops.cast(tv34, dtype=DataType.Float)
    tv43 = fd.ops.mul(tv41, tv3)
    tv46 = fd.ops.add(tv35, tv43)
    tv48 = fd.ops.cast(tv46, dtype=DataType.BFloat16)
    c675 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv51 = fd.ops.pad(tv48, pad_widths=[0, 48, 0, 0, 0, 0, 0, 0], value=c675)
    tv30 = fd.ops.slice(tv12, start_indices=[0, 0, 0, 16], end_indices=[2, 12, 256, 64], strides=[1, 1, 1, 1], manual_normalization=True)
    c673 = fd.ops.add(fd.define_scalar(0, dtype=DataType.Index), fd.define_scalar(16, dtype=DataType.Index))
    c688 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv52 = fd.ops.pad(tv30, pad_widths=[c673, 0, 0, 0, 0, 0, 0, 0], value=c688)
    tv53 = fd.ops.cat([tv51, tv52], dim=3, manual_padding=True)
    tv5 = fd.ops.slice(tv0, start_indices=[0, 0, 768], end_indices=[2, 256, 1536], strides=[1, 1, 1], manual_normalization=True)
    tv8 = fd.ops.reshape(tv5, new_shape=[2, 256, 12, 64])
    tv13 = fd.ops.permute(tv8, dims=[0, 2, 1, 3])
    tv23 = fd.ops.slice(tv13, start_indices=[0, 0, 0, 0], end_indices=[2, 12, 256, 16], strides=[1, 1, 1, 1], manual_normalization=True)
    tv29 = fd.ops.cast(tv23, dtype=DataType.Float)
    tv39 = fd.ops.mul(tv29, tv2)
    tv25 = fd.ops.slice(tv23, start_indices=[0, 0, 0, 8], end_indices=[2, 12, 256, 16], strides=[1, 1, 1, 1], manual_normalization=True)
    tv26 = fd.ops.cast(tv25, dtype=DataType.Float)
    tv27 = fd.ops.neg(tv26)
    tv28 = fd.ops.cast(tv27, dtype=DataType.BFloat16)
    c533 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv36 = fd.ops.pad(tv28, pad_widths=[0, 8, 0, 0, 0, 0, 0, 0], value=c533)
    tv24 = fd.ops.slice(tv23, start_indices=[0, 0, 0, 0], end_indices=[2, 12, 256, 8], strides=[1, 1, 1, 1], manual_normalization=True)
    c531 = fd.ops.add(fd.define_scalar(0, dtype=DataType.Index), fd.define_scalar(8, dtype=DataType.Index))
    c546 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv37 = fd.ops.pad(tv24, pad_widths=[c531, 0, 0, 0, 0, 0, 0, 0], value=c546)
    tv38 = fd.ops.cat([tv36, tv37], dim=3, manual_padding=True)
    tv42 = fd.ops.cast(tv38, dtype=DataType.Float)
    tv44 = fd.ops.mul(tv42, tv3)
    tv47 = fd.ops.add(tv39, tv44)
    tv49 = fd.ops.cast(tv47, dtype=DataType.BFloat16)
    c713 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv54 = fd.ops.pad(tv49, pad_widths=[0, 48, 0, 0, 0, 0, 0, 0], value=c713)
    tv31 = fd.ops.slice(tv13, start_indices=[0, 0, 0, 16], end_indices=[2, 12, 256, 64], strides=[1, 1, 1, 1], manual_normalization=True)
    c711 = fd.ops.add(fd.define_scalar(0, dtype=DataType.Index), fd.define_scalar(16, dtype=DataType.Index))
    c726 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv55 = fd.ops.pad(tv31, pad_widths=[c711, 0, 0, 0, 0, 0, 0, 0], value=c726)
    tv56 = fd.ops.cat([tv54, tv55], dim=3, manual_padding=True)
    tv10 = fd.ops.cast(tv1, dtype=DataType.Float)
    c139 = fd.ops.reciprocal(1.4142135623730951)
    tv11 = fd.ops.mul(tv10, c139)
    tv15 = fd.ops.erf(tv11)
    tv40 = fd.ops.mul(0.500000, tv15)
    tv45 = fd.ops.add(0.500000, tv40)
    tv50 = fd.ops.mul(tv10, tv45)
    tv57 = fd.ops.cast(tv50, dtype=DataType.BFloat16)
    fd.add_output(tv14)
    fd.add_output(tv53)
    fd.add_output(tv56)
    fd.add_output(tv57)


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
# input 0: torch.bfloat16 shape (2, 256, 2304) stride (589824, 2304, 1), storage offset 0
inputs.append(synthesize_storage(1179648, torch.bfloat16, 'cuda:0').as_strided((2, 256, 2304), (589824, 2304, 1), 0))
check_alignment(0, inputs[-1], 256)
# input 1: torch.bfloat16 shape (2, 256, 3072) stride (786432, 3072, 1), storage offset 0
inputs.append(synthesize_storage(1572864, torch.bfloat16, 'cuda:0').as_strided((2, 256, 3072), (786432, 3072, 1), 0))
check_alignment(1, inputs[-1], 256)
# input 2: torch.float32 shape (2, 12, 256, 16) stride (0, 0, 16, 1), storage offset 0
inputs.append(synthesize_storage(4096, torch.float32, 'cuda:0').as_strided((2, 12, 256, 16), (0, 0, 16, 1), 0))
check_alignment(2, inputs[-1], 256)
# input 3: torch.float32 shape (2, 12, 256, 16) stride (0, 0, 16, 1), storage offset 0
inputs.append(synthesize_storage(4096, torch.float32, 'cuda:0').as_strided((2, 12, 256, 16), (0, 0, 16, 1), 0))
check_alignment(3, inputs[-1], 256)

# The per-call options the recording passed (Thunder passes them; nvFuser's repro drops them).
outputs = fd.execute(inputs, _enable_options=[], _disable_options=[])
torch.cuda.synchronize()
