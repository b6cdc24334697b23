# -*- coding: utf-8 -*-
# Written by fusiondiff; nothing from the capture is on these first two lines.
# Repro of fusion backward/nvFusion8/4535027a894d (nvFusion8, backward trace, called 2 times),
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
    tv5 = fd.define_tensor(shape=[512, 768], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv6 = fd.define_tensor(shape=[768], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv7 = fd.define_tensor(shape=[2, 256, 768], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv66 = fd.ops.cast(tv7, dtype=DataType.Float)
    tv21 = fd.ops.expand(tv4, shape=[2, 256, 768])
    tv11 = fd.ops.broadcast(tv2, is_broadcast_dim=[True, True, False])
    tv12 = fd.ops.expand(tv11, shape=[2, 256, 768])
    tv14 = fd.ops.cast(tv12, dtype=DataType.Float)
    tv10 = fd.ops.reshape(tv1, new_shape=[2, 256, 768])
    tv13 = fd.ops.cast(tv10, dtype=DataType.Float)
    tv17 = fd.ops.mul(tv14, tv13)
    tv25 = fd.ops.mul(tv21, tv17)
    tv68 = fd.ops.add(tv66, tv25)
    tv30 = fd.ops.neg(tv25)
    tv36 = fd.ops.sum(tv30, dims=[2], dtype=DataType.Float)
    tv39 = fd.ops.broadcast(tv36, is_broadcast_dim=[False, False, True])
    tv40 = fd.ops.cast(tv39, dtype=DataType.Float)
    tv49 = fd.ops.squeeze(tv40, dims=[2])
    tv57 = fd.ops.broadcast(tv49, is_broadcast_dim=[False, False, True])
    tv58 = fd.ops.cast(tv57, dtype=DataType.Float)
    tv60 = fd.ops.expand(tv58, shape=[2, 256, 768])
    tv65 = fd.ops.mul(0.0013020833333333333, tv60)
    tv16 = fd.ops.cast(tv3, dtype=DataType.Float)
    tv8 = fd.ops.broadcast(tv0, is_broadcast_dim=[False, False, True])
    tv9 = fd.ops.cast(tv8, dtype=DataType.Float)
    tv15 = fd.ops.expand(tv9, shape=[2, 256, 768])
    tv18 = fd.ops.sub(tv16, tv15)
    tv19 = fd.ops.mul(tv18, tv17)
    tv20 = fd.ops.sum(tv19, dims=[2], dtype=DataType.Float)
    tv28 = fd.ops.broadcast(tv20, is_broadcast_dim=[False, False, True])
    tv29 = fd.ops.cast(tv28, dtype=DataType.Float)
    tv33 = fd.ops.mul(-0.500000, tv29)
    tv32 = fd.ops.pow(tv4, 3.00000)
    tv35 = fd.ops.mul(tv33, tv32)
    tv38 = fd.ops.squeeze(tv35, dims=[2])
    tv47 = fd.ops.broadcast(tv38, is_broadcast_dim=[False, False, True])
    tv48 = fd.ops.cast(tv47, dtype=DataType.Float)
    tv52 = fd.ops.expand(tv48, shape=[2, 256, 768])
    tv56 = fd.ops.mul(2.00000, tv52)
    tv45 = fd.ops.broadcast(tv0, is_broadcast_dim=[False, False, True])
    tv46 = fd.ops.cast(tv45, dtype=DataType.Float)
    tv51 = fd.ops.expand(tv46, shape=[2, 256, 768])
    tv55 = fd.ops.sub(tv16, tv51)
    tv59 = fd.ops.mul(tv56, tv55)
    c288 = fd.ops.reciprocal(768.000)
    tv64 = fd.ops.mul(tv59, c288)
    tv67 = fd.ops.add(tv65, tv64)
    tv76 = fd.ops.add(tv68, tv67)
    tv23 = fd.ops.broadcast(tv6, is_broadcast_dim=[True, True, False])
    tv24 = fd.ops.expand(tv23, shape=[2, 256, 768])
    tv27 = fd.ops.cast(tv24, dtype=DataType.Float)
    tv22 = fd.ops.reshape(tv5, new_shape=[2, 256, 768])
    tv26 = fd.ops.cast(tv22, dtype=DataType.Float)
    tv31 = fd.ops.mul(tv27, tv26)
    tv41 = fd.ops.mul(tv21, tv31)
    tv82 = fd.ops.add(tv76, tv41)
    tv44 = fd.ops.neg(tv41)
    tv54 = fd.ops.sum(tv44, dims=[2], dtype=DataType.Float)
    tv62 = fd.ops.broadcast(tv54, is_broadcast_dim=[False, False, True])
    tv63 = fd.ops.cast(tv62, dtype=DataType.Float)
    tv71 = fd.ops.squeeze(tv63, dims=[2])
    tv74 = fd.ops.broadcast(tv71, is_broadcast_dim=[False, False, True])
    tv75 = fd.ops.cast(tv74, dtype=DataType.Float)
    tv78 = fd.ops.expand(tv75, shape=[2, 256, 768])
    tv80 = fd.ops.mul(0.0013020833333333333, tv78)
    tv34 = fd.ops.mul(tv18, tv31)
    tv37 = fd.ops.sum(tv34, dims=[2], dtype=DataType.Float)
    tv42 = fd.ops.broadcast(tv37, is_broadcast_dim=[False, False, True])
    tv43 = fd.ops.cast(tv42, dtype=DataType.Float)
    tv50 = fd.ops.mul(-0.500000, tv43)
    tv53 = fd.ops.mul(tv50, tv32)
    tv61 = fd.ops.squeeze(tv53, dims=[2])
    tv69 = fd.ops.broadcast(tv61, is_broadcast_dim=[False, False, True])
    tv70 = fd.ops.cast(tv69, dtype=DataType.Float)
    tv72 = fd.ops.expand(tv70, shape=[2, 256, 768])
    tv73 = fd.ops.mul(2.00000, tv72)
    tv77 = fd.ops.mul(tv73, tv55)
    c367 = fd.ops.reciprocal(768.000)
    tv79 = fd.ops.mul(tv77, c367)
    tv81 = fd.ops.add(tv80, tv79)
    tv83 = fd.ops.add(tv82, tv81)
    tv84 = fd.ops.cast(tv83, dtype=DataType.BFloat16)
    tv90 = fd.ops.reshape(tv84, new_shape=[512, 768])
    tv96 = fd.ops.permute(tv90, dims=[1, 0])
    tv91 = fd.ops.sum(tv83, dims=[0, 1], dtype=DataType.Float)
    tv97 = fd.ops.cast(tv91, dtype=DataType.BFloat16)
    tv85 = fd.ops.mul(tv18, tv21)
    tv86 = fd.ops.mul(tv85, tv26)
    tv92 = fd.ops.sum(tv86, dims=[0, 1], dtype=DataType.Float)
    tv98 = fd.ops.cast(tv92, dtype=DataType.BFloat16)
    tv88 = fd.ops.cast(tv22, dtype=DataType.Float)
    tv93 = fd.ops.sum(tv88, dims=[0, 1], dtype=DataType.Float)
    tv99 = fd.ops.cast(tv93, dtype=DataType.BFloat16)
    tv87 = fd.ops.mul(tv85, tv13)
    tv94 = fd.ops.sum(tv87, dims=[0, 1], dtype=DataType.Float)
    tv100 = fd.ops.cast(tv94, dtype=DataType.BFloat16)
    tv89 = fd.ops.cast(tv10, dtype=DataType.Float)
    tv95 = fd.ops.sum(tv89, dims=[0, 1], dtype=DataType.Float)
    tv101 = fd.ops.cast(tv95, dtype=DataType.BFloat16)
    fd.add_output(tv96)
    fd.add_output(tv97)
    fd.add_output(tv90)
    fd.add_output(tv84)
    fd.add_output(tv98)
    fd.add_output(tv99)
    fd.add_output(tv100)
    fd.add_output(tv101)


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
# input 5: torch.bfloat16 shape (512, 768) stride (768, 1), storage offset 0
inputs.append(synthesize_storage(393216, torch.bfloat16, 'cuda:0').as_strided((512, 768), (768, 1), 0))
check_alignment(5, inputs[-1], 256)
# input 6: torch.bfloat16 shape (768,) stride (1,), storage offset 0
inputs.append(synthesize_storage(768, torch.bfloat16, 'cuda:0').as_strided((768,), (1,), 0))
check_alignment(6, inputs[-1], 256)
# input 7: torch.bfloat16 shape (2, 256, 768) stride (196608, 768, 1), storage offset 0
inputs.append(synthesize_storage(393216, torch.bfloat16, 'cuda:0').as_strided((2, 256, 768), (196608, 768, 1), 0))
check_alignment(7, inputs[-1], 256)

# The per-call options the recording passed (Thunder passes them; nvFuser's repro drops them).
outputs = fd.execute(inputs, _enable_options=[], _disable_options=[])
torch.cuda.synchronize()
