# -*- coding: utf-8 -*-
# Written by fusiondiff; nothing from the capture is on these first two lines.
# Repro of fusion forward/nvFusion1/9769aa249fa5 (nvFusion1, forward trace, called 2 times),
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
    tv0 = fd.define_tensor(shape=[256, 16], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    tv1 = fd.define_tensor(shape=[256, 16], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    tv2 = fd.define_tensor(shape=[2, 256, 2304], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv3 = fd.define_tensor(shape=[2, 256, 3072], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv14 = fd.ops.slice(tv2, start_indices=[0, 0, 1536], end_indices=[2, 256, 2304], strides=[1, 1, 1], manual_normalization=True)
    tv17 = fd.ops.reshape(tv14, new_shape=[2, 256, 12, 64])
    tv22 = fd.ops.permute(tv17, dims=[0, 2, 1, 3])
    tv12 = fd.ops.slice(tv2, start_indices=[0, 0, 0], end_indices=[2, 256, 768], strides=[1, 1, 1], manual_normalization=True)
    tv15 = fd.ops.reshape(tv12, new_shape=[2, 256, 12, 64])
    tv20 = fd.ops.permute(tv15, dims=[0, 2, 1, 3])
    tv24 = fd.ops.slice(tv20, start_indices=[0, 0, 0, 0], end_indices=[2, 12, 256, 16], strides=[1, 1, 1, 1], manual_normalization=True)
    tv30 = fd.ops.cast(tv24, dtype=DataType.Float)
    tv4 = fd.ops.broadcast(tv0, is_broadcast_dim=[True, False, False])
    tv5 = fd.ops.cast(tv4, dtype=DataType.Float)
    tv8 = fd.ops.broadcast(tv5, is_broadcast_dim=[False, True, False, False])
    tv10 = fd.ops.expand(tv8, shape=[2, 12, 256, 16])
    tv43 = fd.ops.mul(tv30, tv10)
    tv26 = fd.ops.slice(tv24, start_indices=[0, 0, 0, 8], end_indices=[2, 12, 256, 16], strides=[1, 1, 1, 1], manual_normalization=True)
    tv27 = fd.ops.cast(tv26, dtype=DataType.Float)
    tv28 = fd.ops.neg(tv27)
    tv29 = fd.ops.cast(tv28, dtype=DataType.BFloat16)
    c512 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv40 = fd.ops.pad(tv29, pad_widths=[0, 8, 0, 0, 0, 0, 0, 0], value=c512)
    tv25 = fd.ops.slice(tv24, start_indices=[0, 0, 0, 0], end_indices=[2, 12, 256, 8], strides=[1, 1, 1, 1], manual_normalization=True)
    c510 = fd.ops.add(fd.define_scalar(0, dtype=DataType.Index), fd.define_scalar(8, dtype=DataType.Index))
    c525 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv41 = fd.ops.pad(tv25, pad_widths=[c510, 0, 0, 0, 0, 0, 0, 0], value=c525)
    tv42 = fd.ops.cat([tv40, tv41], dim=3, manual_padding=True)
    tv49 = fd.ops.cast(tv42, dtype=DataType.Float)
    tv6 = fd.ops.broadcast(tv1, is_broadcast_dim=[True, False, False])
    tv7 = fd.ops.cast(tv6, dtype=DataType.Float)
    tv9 = fd.ops.broadcast(tv7, is_broadcast_dim=[False, True, False, False])
    tv11 = fd.ops.expand(tv9, shape=[2, 12, 256, 16])
    tv51 = fd.ops.mul(tv49, tv11)
    tv54 = fd.ops.add(tv43, tv51)
    tv56 = fd.ops.cast(tv54, dtype=DataType.BFloat16)
    c701 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv59 = fd.ops.pad(tv56, pad_widths=[0, 48, 0, 0, 0, 0, 0, 0], value=c701)
    tv38 = fd.ops.slice(tv20, start_indices=[0, 0, 0, 16], end_indices=[2, 12, 256, 64], strides=[1, 1, 1, 1], manual_normalization=True)
    c699 = fd.ops.add(fd.define_scalar(0, dtype=DataType.Index), fd.define_scalar(16, dtype=DataType.Index))
    c714 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv60 = fd.ops.pad(tv38, pad_widths=[c699, 0, 0, 0, 0, 0, 0, 0], value=c714)
    tv61 = fd.ops.cat([tv59, tv60], dim=3, manual_padding=True)
    tv13 = fd.ops.slice(tv2, start_indices=[0, 0, 768], end_indices=[2, 256, 1536], strides=[1, 1, 1], manual_normalization=True)
    tv16 = fd.ops.reshape(tv13, new_shape=[2, 256, 12, 64])
    tv21 = fd.ops.permute(tv16, dims=[0, 2, 1, 3])
    tv31 = fd.ops.slice(tv21, start_indices=[0, 0, 0, 0], end_indices=[2, 12, 256, 16], strides=[1, 1, 1, 1], manual_normalization=True)
    tv37 = fd.ops.cast(tv31, dtype=DataType.Float)
    tv47 = fd.ops.mul(tv37, tv10)
    tv33 = fd.ops.slice(tv31, start_indices=[0, 0, 0, 8], end_indices=[2, 12, 256, 16], strides=[1, 1, 1, 1], manual_normalization=True)
    tv34 = fd.ops.cast(tv33, dtype=DataType.Float)
    tv35 = fd.ops.neg(tv34)
    tv36 = fd.ops.cast(tv35, dtype=DataType.BFloat16)
    c559 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv44 = fd.ops.pad(tv36, pad_widths=[0, 8, 0, 0, 0, 0, 0, 0], value=c559)
    tv32 = fd.ops.slice(tv31, start_indices=[0, 0, 0, 0], end_indices=[2, 12, 256, 8], strides=[1, 1, 1, 1], manual_normalization=True)
    c557 = fd.ops.add(fd.define_scalar(0, dtype=DataType.Index), fd.define_scalar(8, dtype=DataType.Index))
    c572 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv45 = fd.ops.pad(tv32, pad_widths=[c557, 0, 0, 0, 0, 0, 0, 0], value=c572)
    tv46 = fd.ops.cat([tv44, tv45], dim=3, manual_padding=True)
    tv50 = fd.ops.cast(tv46, dtype=DataType.Float)
    tv52 = fd.ops.mul(tv50, tv11)
    tv55 = fd.ops.add(tv47, tv52)
    tv57 = fd.ops.cast(tv55, dtype=DataType.BFloat16)
    c739 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv62 = fd.ops.pad(tv57, pad_widths=[0, 48, 0, 0, 0, 0, 0, 0], value=c739)
    tv39 = fd.ops.slice(tv21, start_indices=[0, 0, 0, 16], end_indices=[2, 12, 256, 64], strides=[1, 1, 1, 1], manual_normalization=True)
    c737 = fd.ops.add(fd.define_scalar(0, dtype=DataType.Index), fd.define_scalar(16, dtype=DataType.Index))
    c752 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv63 = fd.ops.pad(tv39, pad_widths=[c737, 0, 0, 0, 0, 0, 0, 0], value=c752)
    tv64 = fd.ops.cat([tv62, tv63], dim=3, manual_padding=True)
    tv18 = fd.ops.cast(tv3, dtype=DataType.Float)
    c165 = fd.ops.reciprocal(1.4142135623730951)
    tv19 = fd.ops.mul(tv18, c165)
    tv23 = fd.ops.erf(tv19)
    tv48 = fd.ops.mul(0.500000, tv23)
    tv53 = fd.ops.add(0.500000, tv48)
    tv58 = fd.ops.mul(tv18, tv53)
    tv65 = fd.ops.cast(tv58, dtype=DataType.BFloat16)
    fd.add_output(tv10)
    fd.add_output(tv11)
    fd.add_output(tv22)
    fd.add_output(tv61)
    fd.add_output(tv64)
    fd.add_output(tv65)


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
# input 0: torch.float32 shape (256, 16) stride (16, 1), storage offset 0
inputs.append(synthesize_storage(4096, torch.float32, 'cuda:0').as_strided((256, 16), (16, 1), 0))
check_alignment(0, inputs[-1], 256)
# input 1: torch.float32 shape (256, 16) stride (16, 1), storage offset 0
inputs.append(synthesize_storage(4096, torch.float32, 'cuda:0').as_strided((256, 16), (16, 1), 0))
check_alignment(1, inputs[-1], 256)
# input 2: torch.bfloat16 shape (2, 256, 2304) stride (589824, 2304, 1), storage offset 0
inputs.append(synthesize_storage(1179648, torch.bfloat16, 'cuda:0').as_strided((2, 256, 2304), (589824, 2304, 1), 0))
check_alignment(2, inputs[-1], 256)
# input 3: torch.bfloat16 shape (2, 256, 3072) stride (786432, 3072, 1), storage offset 0
inputs.append(synthesize_storage(1572864, torch.bfloat16, 'cuda:0').as_strided((2, 256, 3072), (786432, 3072, 1), 0))
check_alignment(3, inputs[-1], 256)

# The per-call options the recording passed (Thunder passes them; nvFuser's repro drops them).
outputs = fd.execute(inputs, _enable_options=[], _disable_options=[])
torch.cuda.synchronize()
