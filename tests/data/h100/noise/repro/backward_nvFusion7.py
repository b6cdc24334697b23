# -*- coding: utf-8 -*-
# Written by fusiondiff; nothing from the capture is on these first two lines.
# Repro of fusion backward/nvFusion7/1c70d5a54afe (nvFusion7, backward trace, called 2 times),
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

# 3 integer literal(s) defined as DataType.Index scalars, as in the recorded fusion (printed bare, they would rebuild as Int and add casts).
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[2, 12, 256, 64], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 1, 2, 0])
    tv1 = fd.define_tensor(shape=[2, 12, 256, 64], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.define_tensor(shape=[2, 12, 256, 64], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv3 = fd.define_tensor(shape=[2, 12, 256, 16], contiguity=[None, None, True, True], dtype=DataType.Float, is_cpu=False)
    tv4 = fd.define_tensor(shape=[2, 12, 256, 16], contiguity=[None, None, True, True], dtype=DataType.Float, is_cpu=False)
    tv10 = fd.ops.slice(tv2, start_indices=[0, 0, 0, 16], end_indices=[2, 12, 256, 64], strides=[1, 1, 1, 1], manual_normalization=True)
    tv11 = fd.ops.pad(tv10, pad_widths=[16, 0, 0, 0, 0, 0, 0, 0], value=0.00000)
    tv47 = fd.ops.cast(tv11, dtype=DataType.Float)
    tv9 = fd.ops.slice(tv2, start_indices=[0, 0, 0, 0], end_indices=[2, 12, 256, 16], strides=[1, 1, 1, 1], manual_normalization=True)
    tv13 = fd.ops.cast(tv9, dtype=DataType.Float)
    tv16 = fd.ops.mul(tv4, tv13)
    tv15 = fd.ops.mul(tv3, tv13)
    tv27 = fd.ops.cast(tv15, dtype=DataType.BFloat16)
    tv28 = fd.ops.slice(tv27, start_indices=[0, 0, 0, 0], end_indices=[2, 12, 256, 8], strides=[1, 1, 1, 1], manual_normalization=True)
    tv30 = fd.ops.cast(tv28, dtype=DataType.Float)
    tv31 = fd.ops.neg(tv30)
    tv32 = fd.ops.cast(tv31, dtype=DataType.BFloat16)
    tv33 = fd.ops.pad(tv32, pad_widths=[8, 0, 0, 0, 0, 0, 0, 0], value=0.00000)
    tv35 = fd.ops.cast(tv33, dtype=DataType.Float)
    tv36 = fd.ops.add(tv16, tv35)
    tv29 = fd.ops.slice(tv27, start_indices=[0, 0, 0, 8], end_indices=[2, 12, 256, 16], strides=[1, 1, 1, 1], manual_normalization=True)
    tv34 = fd.ops.pad(tv29, pad_widths=[0, 8, 0, 0, 0, 0, 0, 0], value=0.00000)
    tv39 = fd.ops.cast(tv34, dtype=DataType.Float)
    tv40 = fd.ops.add(tv36, tv39)
    tv41 = fd.ops.cast(tv40, dtype=DataType.BFloat16)
    tv46 = fd.ops.pad(tv41, pad_widths=[0, 48, 0, 0, 0, 0, 0, 0], value=0.00000)
    tv48 = fd.ops.cast(tv46, dtype=DataType.Float)
    tv49 = fd.ops.add(tv47, tv48)
    tv50 = fd.ops.cast(tv49, dtype=DataType.BFloat16)
    tv55 = fd.ops.permute(tv50, dims=[0, 2, 1, 3])
    tv58 = fd.ops.reshape(tv55, new_shape=[2, 256, 768])
    c755 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv59 = fd.ops.pad(tv58, pad_widths=[0, 1536, 0, 0, 0, 0], value=c755)
    tv7 = fd.ops.slice(tv1, start_indices=[0, 0, 0, 16], end_indices=[2, 12, 256, 64], strides=[1, 1, 1, 1], manual_normalization=True)
    tv8 = fd.ops.pad(tv7, pad_widths=[16, 0, 0, 0, 0, 0, 0, 0], value=0.00000)
    tv51 = fd.ops.cast(tv8, dtype=DataType.Float)
    tv6 = fd.ops.slice(tv1, start_indices=[0, 0, 0, 0], end_indices=[2, 12, 256, 16], strides=[1, 1, 1, 1], manual_normalization=True)
    tv12 = fd.ops.cast(tv6, dtype=DataType.Float)
    tv18 = fd.ops.mul(tv4, tv12)
    tv17 = fd.ops.mul(tv3, tv12)
    tv19 = fd.ops.cast(tv17, dtype=DataType.BFloat16)
    tv20 = fd.ops.slice(tv19, start_indices=[0, 0, 0, 0], end_indices=[2, 12, 256, 8], strides=[1, 1, 1, 1], manual_normalization=True)
    tv22 = fd.ops.cast(tv20, dtype=DataType.Float)
    tv23 = fd.ops.neg(tv22)
    tv24 = fd.ops.cast(tv23, dtype=DataType.BFloat16)
    tv25 = fd.ops.pad(tv24, pad_widths=[8, 0, 0, 0, 0, 0, 0, 0], value=0.00000)
    tv37 = fd.ops.cast(tv25, dtype=DataType.Float)
    tv38 = fd.ops.add(tv18, tv37)
    tv21 = fd.ops.slice(tv19, start_indices=[0, 0, 0, 8], end_indices=[2, 12, 256, 16], strides=[1, 1, 1, 1], manual_normalization=True)
    tv26 = fd.ops.pad(tv21, pad_widths=[0, 8, 0, 0, 0, 0, 0, 0], value=0.00000)
    tv42 = fd.ops.cast(tv26, dtype=DataType.Float)
    tv43 = fd.ops.add(tv38, tv42)
    tv44 = fd.ops.cast(tv43, dtype=DataType.BFloat16)
    tv45 = fd.ops.pad(tv44, pad_widths=[0, 48, 0, 0, 0, 0, 0, 0], value=0.00000)
    tv52 = fd.ops.cast(tv45, dtype=DataType.Float)
    tv53 = fd.ops.add(tv51, tv52)
    tv54 = fd.ops.cast(tv53, dtype=DataType.BFloat16)
    tv56 = fd.ops.permute(tv54, dims=[0, 2, 1, 3])
    tv57 = fd.ops.reshape(tv56, new_shape=[2, 256, 768])
    c753 = fd.ops.add(fd.define_scalar(0, dtype=DataType.Index), fd.define_scalar(768, dtype=DataType.Index))
    c768 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv60 = fd.ops.pad(tv57, pad_widths=[c753, 768, 0, 0, 0, 0], value=c768)
    tv5 = fd.ops.permute(tv0, dims=[0, 2, 1, 3])
    tv14 = fd.ops.reshape(tv5, new_shape=[2, 256, 768])
    c766 = fd.ops.add(c753, fd.define_scalar(768, dtype=DataType.Index))
    c782 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv61 = fd.ops.pad(tv14, pad_widths=[c766, 0, 0, 0, 0, 0], value=c782)
    tv62 = fd.ops.cat([tv59, tv60, tv61], dim=2, manual_padding=True)
    tv64 = fd.ops.cast(tv62, dtype=DataType.Float)
    tv65 = fd.ops.sum(tv64, dims=[0, 1], dtype=DataType.Float)
    tv66 = fd.ops.cast(tv65, dtype=DataType.BFloat16)
    tv63 = fd.ops.reshape(tv62, new_shape=[512, 2304])
    tv67 = fd.ops.permute(tv63, dims=[1, 0])
    fd.add_output(tv63)
    fd.add_output(tv66)
    fd.add_output(tv67)


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
# input 0: torch.bfloat16 shape (2, 12, 256, 64) stride (196608, 64, 768, 1), storage offset 0
inputs.append(synthesize_storage(393216, torch.bfloat16, 'cuda:0').as_strided((2, 12, 256, 64), (196608, 64, 768, 1), 0))
check_alignment(0, inputs[-1], 256)
# input 1: torch.bfloat16 shape (2, 12, 256, 64) stride (196608, 16384, 64, 1), storage offset 0
inputs.append(synthesize_storage(393216, torch.bfloat16, 'cuda:0').as_strided((2, 12, 256, 64), (196608, 16384, 64, 1), 0))
check_alignment(1, inputs[-1], 256)
# input 2: torch.bfloat16 shape (2, 12, 256, 64) stride (196608, 16384, 64, 1), storage offset 0
inputs.append(synthesize_storage(393216, torch.bfloat16, 'cuda:0').as_strided((2, 12, 256, 64), (196608, 16384, 64, 1), 0))
check_alignment(2, inputs[-1], 256)
# input 3: torch.float32 shape (2, 12, 256, 16) stride (0, 0, 16, 1), storage offset 0
inputs.append(synthesize_storage(4096, torch.float32, 'cuda:0').as_strided((2, 12, 256, 16), (0, 0, 16, 1), 0))
check_alignment(3, inputs[-1], 256)
# input 4: torch.float32 shape (2, 12, 256, 16) stride (0, 0, 16, 1), storage offset 0
inputs.append(synthesize_storage(4096, torch.float32, 'cuda:0').as_strided((2, 12, 256, 16), (0, 0, 16, 1), 0))
check_alignment(4, inputs[-1], 256)

# The per-call options the recording passed (Thunder passes them; nvFuser's repro drops them).
outputs = fd.execute(inputs, _enable_options=[], _disable_options=[])
torch.cuda.synchronize()
