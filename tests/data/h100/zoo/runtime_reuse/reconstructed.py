# -*- coding: utf-8 -*-
# Written by fusiondiff; nothing from the capture is on these first two lines.
# Repro of fusion script/fusion0/694f99f2ede5 (fusion0, script, called once),
# written by fusiondiff 0.1.0 from capture OUT/zoo/runtime_reuse/live.json.
# Recorded at 2026-12-05T23:49:50+00:00 on NVIDIA H100 80GB HBM3 (sm 9.0): driver 580.159.04,
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


def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    tv1 = fd.ops.mul(tv0, tv0)
    tv2 = fd.ops.sum(tv1, dims=[1], dtype=DataType.Float)
    fd.add_output(tv2)


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
# input 0: torch.float32 shape (4096, 4096) stride (4096, 1), storage offset 0
inputs.append(synthesize_storage(16777216, torch.float32, 'cuda:0').as_strided((4096, 4096), (4096, 1), 0))
check_alignment(0, inputs[-1], 256)

# The per-call options the recording passed (Thunder passes them; nvFuser's repro drops them).
outputs = fd.execute(inputs, _enable_options=[], _disable_options=[])
torch.cuda.synchronize()
