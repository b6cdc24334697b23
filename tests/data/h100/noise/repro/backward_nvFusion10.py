# -*- coding: utf-8 -*-
# Written by fusiondiff; nothing from the capture is on these first two lines.
# Repro of fusion backward/nvFusion10/5b12376ed433 (nvFusion10, backward trace, called 2 times),
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
    tv0 = fd.define_tensor(shape=[256, 16], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    tv1 = fd.define_tensor(shape=[2, 12, 256, 64], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.define_tensor(shape=[2, 12, 256, 64], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv3 = fd.define_tensor(shape=[256, 16], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    tv4 = fd.define_tensor(shape=[2, 12, 256, 64], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 1, 2, 0])
    tv48 = fd.ops.slice(tv2, start_indices=[0, 0, 0, 16], end_indices=[2, 12, 256, 64], strides=[1, 1, 1, 1], manual_normalization=True)
    tv52 = fd.ops.pad(tv48, pad_widths=[16, 0, 0, 0, 0, 0, 0, 0], value=0.00000)
    tv56 = fd.ops.cast(tv52, dtype=DataType.Float)
    tv18 = fd.ops.broadcast(tv3, is_broadcast_dim=[True, False, False])
    tv19 = fd.ops.cast(tv18, dtype=DataType.Float)
    tv22 = fd.ops.broadcast(tv19, is_broadcast_dim=[False, True, False, False])
    tv25 = fd.ops.expand(tv22, shape=[2, 12, 256, 16])
    tv9 = fd.ops.slice(tv2, start_indices=[0, 0, 0, 0], end_indices=[2, 12, 256, 16], strides=[1, 1, 1, 1], manual_normalization=True)
    tv12 = fd.ops.cast(tv9, dtype=DataType.Float)
    tv30 = fd.ops.mul(tv25, tv12)
    tv5 = fd.ops.broadcast(tv0, is_broadcast_dim=[True, False, False])
    tv6 = fd.ops.cast(tv5, dtype=DataType.Float)
    tv8 = fd.ops.broadcast(tv6, is_broadcast_dim=[False, True, False, False])
    tv11 = fd.ops.expand(tv8, shape=[2, 12, 256, 16])
    tv14 = fd.ops.mul(tv11, tv12)
    tv16 = fd.ops.cast(tv14, dtype=DataType.BFloat16)
    tv20 = fd.ops.slice(tv16, start_indices=[0, 0, 0, 0], end_indices=[2, 12, 256, 8], strides=[1, 1, 1, 1], manual_normalization=True)
    tv23 = fd.ops.cast(tv20, dtype=DataType.Float)
    tv26 = fd.ops.neg(tv23)
    tv29 = fd.ops.cast(tv26, dtype=DataType.BFloat16)
    tv32 = fd.ops.pad(tv29, pad_widths=[8, 0, 0, 0, 0, 0, 0, 0], value=0.00000)
    tv34 = fd.ops.cast(tv32, dtype=DataType.Float)
    tv38 = fd.ops.add(tv30, tv34)
    tv37 = fd.ops.slice(tv16, start_indices=[0, 0, 0, 8], end_indices=[2, 12, 256, 16], strides=[1, 1, 1, 1], manual_normalization=True)
    tv40 = fd.ops.pad(tv37, pad_widths=[0, 8, 0, 0, 0, 0, 0, 0], value=0.00000)
    tv42 = fd.ops.cast(tv40, dtype=DataType.Float)
    tv44 = fd.ops.add(tv38, tv42)
    tv47 = fd.ops.cast(tv44, dtype=DataType.BFloat16)
    tv51 = fd.ops.pad(tv47, pad_widths=[0, 48, 0, 0, 0, 0, 0, 0], value=0.00000)
    tv55 = fd.ops.cast(tv51, dtype=DataType.Float)
    tv58 = fd.ops.add(tv56, tv55)
    tv60 = fd.ops.cast(tv58, dtype=DataType.BFloat16)
    tv63 = fd.ops.permute(tv60, dims=[0, 2, 1, 3])
    tv66 = fd.ops.reshape(tv63, new_shape=[2, 256, 768])
    c781 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv67 = fd.ops.pad(tv66, pad_widths=[0, 1536, 0, 0, 0, 0], value=c781)
    tv46 = fd.ops.slice(tv1, start_indices=[0, 0, 0, 16], end_indices=[2, 12, 256, 64], strides=[1, 1, 1, 1], manual_normalization=True)
    tv50 = fd.ops.pad(tv46, pad_widths=[16, 0, 0, 0, 0, 0, 0, 0], value=0.00000)
    tv54 = fd.ops.cast(tv50, dtype=DataType.Float)
    tv7 = fd.ops.slice(tv1, start_indices=[0, 0, 0, 0], end_indices=[2, 12, 256, 16], strides=[1, 1, 1, 1], manual_normalization=True)
    tv10 = fd.ops.cast(tv7, dtype=DataType.Float)
    tv28 = fd.ops.mul(tv25, tv10)
    tv13 = fd.ops.mul(tv11, tv10)
    tv15 = fd.ops.cast(tv13, dtype=DataType.BFloat16)
    tv17 = fd.ops.slice(tv15, start_indices=[0, 0, 0, 0], end_indices=[2, 12, 256, 8], strides=[1, 1, 1, 1], manual_normalization=True)
    tv21 = fd.ops.cast(tv17, dtype=DataType.Float)
    tv24 = fd.ops.neg(tv21)
    tv27 = fd.ops.cast(tv24, dtype=DataType.BFloat16)
    tv31 = fd.ops.pad(tv27, pad_widths=[8, 0, 0, 0, 0, 0, 0, 0], value=0.00000)
    tv33 = fd.ops.cast(tv31, dtype=DataType.Float)
    tv36 = fd.ops.add(tv28, tv33)
    tv35 = fd.ops.slice(tv15, start_indices=[0, 0, 0, 8], end_indices=[2, 12, 256, 16], strides=[1, 1, 1, 1], manual_normalization=True)
    tv39 = fd.ops.pad(tv35, pad_widths=[0, 8, 0, 0, 0, 0, 0, 0], value=0.00000)
    tv41 = fd.ops.cast(tv39, dtype=DataType.Float)
    tv43 = fd.ops.add(tv36, tv41)
    tv45 = fd.ops.cast(tv43, dtype=DataType.BFloat16)
    tv49 = fd.ops.pad(tv45, pad_widths=[0, 48, 0, 0, 0, 0, 0, 0], value=0.00000)
    tv53 = fd.ops.cast(tv49, dtype=DataType.Float)
    tv57 = fd.ops.add(tv54, tv53)
    tv59 = fd.ops.cast(tv57, dtype=DataType.BFloat16)
    tv62 = fd.ops.permute(tv59, dims=[0, 2, 1, 3])
    tv65 = fd.ops.reshape(tv62, new_shape=[2, 256, 768])
    c779 = fd.ops.add(fd.define_scalar(0, dtype=DataType.Index), fd.define_scalar(768, dtype=DataType.Index))
    c794 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv68 = fd.ops.pad(tv65, pad_widths=[c779, 768, 0, 0, 0, 0], value=c794)
    tv61 = fd.ops.permute(tv4, dims=[0, 2, 1, 3])
    tv64 = fd.ops.reshape(tv61, new_shape=[2, 256, 768])
    c792 = fd.ops.add(c779, fd.define_scalar(768, dtype=DataType.Index))
    c808 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv69 = fd.ops.pad(tv64, pad_widths=[c792, 0, 0, 0, 0, 0], value=c808)
    tv70 = fd.ops.cat([tv67, tv68, tv69], dim=2, manual_padding=True)
    tv71 = fd.ops.cast(tv70, dtype=DataType.Float)
    tv73 = fd.ops.sum(tv71, dims=[0, 1], dtype=DataType.Float)
    tv75 = fd.ops.cast(tv73, dtype=DataType.BFloat16)
    tv72 = fd.ops.reshape(tv70, new_shape=[512, 2304])
    tv74 = fd.ops.permute(tv72, dims=[1, 0])
    fd.add_output(tv72)
    fd.add_output(tv75)
    fd.add_output(tv74)


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
# input 1: torch.bfloat16 shape (2, 12, 256, 64) stride (196608, 16384, 64, 1), storage offset 0
inputs.append(synthesize_storage(393216, torch.bfloat16, 'cuda:0').as_strided((2, 12, 256, 64), (196608, 16384, 64, 1), 0))
check_alignment(1, inputs[-1], 256)
# input 2: torch.bfloat16 shape (2, 12, 256, 64) stride (196608, 16384, 64, 1), storage offset 0
inputs.append(synthesize_storage(393216, torch.bfloat16, 'cuda:0').as_strided((2, 12, 256, 64), (196608, 16384, 64, 1), 0))
check_alignment(2, inputs[-1], 256)
# input 3: torch.float32 shape (256, 16) stride (16, 1), storage offset 0
inputs.append(synthesize_storage(4096, torch.float32, 'cuda:0').as_strided((256, 16), (16, 1), 0))
check_alignment(3, inputs[-1], 256)
# input 4: torch.bfloat16 shape (2, 12, 256, 64) stride (196608, 64, 768, 1), storage offset 0
inputs.append(synthesize_storage(393216, torch.bfloat16, 'cuda:0').as_strided((2, 12, 256, 64), (196608, 64, 768, 1), 0))
check_alignment(4, inputs[-1], 256)

# The per-call options the recording passed (Thunder passes them; nvFuser's repro drops them).
outputs = fd.execute(inputs, _enable_options=[], _disable_options=[])
torch.cuda.synchronize()
