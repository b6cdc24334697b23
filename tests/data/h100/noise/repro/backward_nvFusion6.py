# -*- coding: utf-8 -*-
# Written by fusiondiff; nothing from the capture is on these first two lines.
# Repro of fusion backward/nvFusion6/8f0bd4e0dcd6 (nvFusion6, backward trace, called 2 times),
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
#   1.12838 -> 1.1283791670955126
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[512, 3072], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv1 = fd.define_tensor(shape=[2, 256, 3072], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.define_tensor(shape=[512, 768], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv21 = fd.ops.reshape(tv2, new_shape=[2, 256, 768])
    tv24 = fd.ops.reshape(tv21, new_shape=[2, 256, 12, 64])
    tv27 = fd.ops.permute(tv24, dims=[0, 2, 1, 3])
    tv4 = fd.ops.cast(tv1, dtype=DataType.Float)
    c36 = fd.ops.reciprocal(1.4142135623730951)
    tv6 = fd.ops.mul(tv4, c36)
    tv8 = fd.ops.erf(tv6)
    tv12 = fd.ops.mul(0.500000, tv8)
    tv16 = fd.ops.add(0.500000, tv12)
    tv3 = fd.ops.reshape(tv0, new_shape=[2, 256, 3072])
    tv5 = fd.ops.cast(tv3, dtype=DataType.Float)
    tv18 = fd.ops.mul(tv16, tv5)
    tv9 = fd.ops.pow(tv6, 2.00000)
    tv11 = fd.ops.neg(tv9)
    tv13 = fd.ops.exp(tv11)
    tv14 = fd.ops.mul(1.1283791670955126, tv13)
    tv7 = fd.ops.mul(tv4, tv5)
    tv10 = fd.ops.mul(0.500000, tv7)
    tv15 = fd.ops.mul(tv14, tv10)
    c121 = fd.ops.reciprocal(1.4142135623730951)
    tv17 = fd.ops.mul(tv15, c121)
    tv19 = fd.ops.add(tv18, tv17)
    tv23 = fd.ops.sum(tv19, dims=[0, 1], dtype=DataType.Float)
    tv26 = fd.ops.cast(tv23, dtype=DataType.BFloat16)
    tv20 = fd.ops.cast(tv19, dtype=DataType.BFloat16)
    tv22 = fd.ops.reshape(tv20, new_shape=[512, 3072])
    tv25 = fd.ops.permute(tv22, dims=[1, 0])
    fd.add_output(tv27)
    fd.add_output(tv22)
    fd.add_output(tv26)
    fd.add_output(tv25)


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
# input 0: torch.bfloat16 shape (512, 3072) stride (3072, 1), storage offset 0
inputs.append(synthesize_storage(1572864, torch.bfloat16, 'cuda:0').as_strided((512, 3072), (3072, 1), 0))
check_alignment(0, inputs[-1], 256)
# input 1: torch.bfloat16 shape (2, 256, 3072) stride (786432, 3072, 1), storage offset 0
inputs.append(synthesize_storage(1572864, torch.bfloat16, 'cuda:0').as_strided((2, 256, 3072), (786432, 3072, 1), 0))
check_alignment(1, inputs[-1], 256)
# input 2: torch.bfloat16 shape (512, 768) stride (768, 1), storage offset 0
inputs.append(synthesize_storage(393216, torch.bfloat16, 'cuda:0').as_strided((512, 768), (768, 1), 0))
check_alignment(2, inputs[-1], 256)

# The per-call options the recording passed (Thunder passes them; nvFuser's repro drops them).
outputs = fd.execute(inputs, _enable_options=[], _disable_options=[])
torch.cuda.synchronize()
