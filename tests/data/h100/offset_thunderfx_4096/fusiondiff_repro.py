# -*- coding: utf-8 -*-
# Written by fusiondiff; nothing from the capture is on these first two lines.
# Repro of fusion forward/nvFusion0/93a7873dbe29 (nvFusion0, forward trace, called 3 times),
# written by fusiondiff 0.1.0 from capture live.json.
# Recorded at 2026-12-06T01:46:22+00:00 on NVIDIA H100 80GB HBM3 (sm 9.0): driver 580.159.04,
#   CUDA 13.0, torch 2.11.0+cu130, nvFuser 0.2.36+git7e04d26, Thunder 0.2.6.
# It keeps what nvFuser's repro_script_for drops: the NVFUSER_* variables, each input's storage
# offset (so its pointer alignment), strides and integer value range, the enable/disable options
# and the constants' full precision, and loads the exact inputs.
# Needs torch and nvfuser_direct, and safetensors for the exact inputs.

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
# 1 integer literal(s) defined as DataType.Index scalars, as in the recorded fusion (printed bare, they would rebuild as Int and add casts).
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[4096, 4096], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv1 = fd.define_tensor(shape=[4096], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.define_tensor(shape=[4096], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv3 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv10, tv11, tv12 = fd.ops.welford(tv3, dims=[1])
    tv16 = fd.ops.broadcast(tv10, is_broadcast_dim=[False, True])
    tv17 = fd.ops.cast(tv16, dtype=DataType.Float)
    tv19 = fd.ops.expand(tv17, shape=[4096, 4096])
    tv21 = fd.ops.sub(tv3, tv19)
    c30 = fd.ops.cast(fd.define_scalar(4096, dtype=DataType.Index), dtype=DataType.Double)
    c32 = fd.ops.mul(1.00000, c30)
    c36 = fd.ops.cast(0, dtype=DataType.Double)
    c38 = fd.ops.sub(c32, c36)
    c40 = fd.ops.cast(0, dtype=DataType.Double)
    c42 = fd.ops.ge(c38, c40)
    c44 = fd.ops.cast(0, dtype=DataType.Double)
    c46 = fd.ops.where(c42, c38, c44)
    c51 = fd.ops.reciprocal(c46)
    tv13 = fd.ops.mul(tv11, c51)
    tv14 = fd.ops.broadcast(tv13, is_broadcast_dim=[False, True])
    tv15 = fd.ops.cast(tv14, dtype=DataType.Float)
    tv18 = fd.ops.add(tv15, 1.00000e-05)
    tv20 = fd.ops.rsqrt(tv18)
    tv22 = fd.ops.expand(tv20, shape=[4096, 4096])
    tv23 = fd.ops.mul(tv21, tv22)
    tv4 = fd.ops.broadcast(tv1, is_broadcast_dim=[True, False])
    tv5 = fd.ops.expand(tv4, shape=[4096, 4096])
    tv6 = fd.ops.cast(tv5, dtype=DataType.Float)
    tv24 = fd.ops.mul(tv23, tv6)
    tv7 = fd.ops.broadcast(tv2, is_broadcast_dim=[True, False])
    tv8 = fd.ops.expand(tv7, shape=[4096, 4096])
    tv9 = fd.ops.cast(tv8, dtype=DataType.Float)
    tv25 = fd.ops.add(tv24, tv9)
    tv26 = fd.ops.cast(tv25, dtype=DataType.BFloat16)
    c105 = fd.ops.reciprocal(1.4142135623730951)
    tv27 = fd.ops.mul(tv25, c105)
    tv28 = fd.ops.erf(tv27)
    tv29 = fd.ops.mul(0.500000, tv28)
    tv30 = fd.ops.add(0.500000, tv29)
    tv31 = fd.ops.mul(tv25, tv30)
    tv32 = fd.ops.cast(tv31, dtype=DataType.BFloat16)
    fd.add_output(tv23)
    fd.add_output(tv26)
    fd.add_output(tv32)


with FusionDefinition() as fd:
    nvfuser_fusion(fd)


def exact_storage(saved, key, dtype, device):
    """A saved input's whole storage, copied to ``device``."""
    # Each saved tensor is the input's whole storage, flat. Copied into a fresh storage (aligned
    # to 512 bytes by the caching allocator) so the storage offset sets the alignment.
    return saved[key].to(device, copy=True).view(dtype)


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


from safetensors.torch import load_file

TENSORS_FILE = Path('live.tensors.safetensors')
if not TENSORS_FILE.is_absolute():
    # Relative to this script, so the script and the saved inputs can move together.
    TENSORS_FILE = Path(__file__).resolve().parent / TENSORS_FILE
if not TENSORS_FILE.exists():
    sys.exit(f'exact inputs not found: {TENSORS_FILE} (keep it where the capture saved it)')
_SAVED = load_file(str(TENSORS_FILE))


inputs = []
# input 0: torch.bfloat16 shape (4096, 4096) stride (4096, 1), storage offset 1, exact values
inputs.append(exact_storage(_SAVED, '0/input0', torch.bfloat16, 'cuda:0').as_strided((4096, 4096), (4096, 1), 1))
check_alignment(0, inputs[-1], 2)
# input 1: torch.bfloat16 shape (4096,) stride (1,), storage offset 0, exact values
inputs.append(exact_storage(_SAVED, '0/input1', torch.bfloat16, 'cuda:0').as_strided((4096,), (1,), 0))
check_alignment(1, inputs[-1], 256)
# input 2: torch.bfloat16 shape (4096,) stride (1,), storage offset 0, exact values
inputs.append(exact_storage(_SAVED, '0/input2', torch.bfloat16, 'cuda:0').as_strided((4096,), (1,), 0))
check_alignment(2, inputs[-1], 256)

# The per-call options the recording passed (Thunder passes them; nvFuser's repro drops them).
outputs = fd.execute(inputs, _enable_options=[], _disable_options=[])
torch.cuda.synchronize()
