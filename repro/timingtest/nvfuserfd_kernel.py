"""The saved-script path of Thunder issue #1869, on today's stack.

The definition is nvFuser's own repro of today's nvFusion0 (printed by ``fd.repro_script_for`` on
the H200, see tests/data/seed/live_forward.json), and the seed's measurement is kept. Changed so that
it runs: nvFuser's repro draws the int64 token ids with ``make_tensor`` (values in [-9, 10)); negative
ids make the gather read out of bounds, and on the H200 the process died with
CUDA_ERROR_ILLEGAL_ADDRESS. The ids are drawn in [0, 255) as the seed model's input was.
Added beside it: fusiondiff's protocol on the same FusionDefinition and inputs.

    python repro/timingtest/nvfuserfd_kernel.py [OUT.json]
"""

import torch
from beside_the_seed import report_beside_seed  # this folder: run the script as a file
from nvfuser_direct import DataType, FusionDefinition
from torch.profiler import ProfilerActivity, profile


def nvfuser_fusion(fd: FusionDefinition) -> None:
    tv0 = fd.define_tensor(shape=[4, 1024], contiguity=[True, True], dtype=DataType.Int, is_cpu=False)
    tv1 = fd.define_tensor(shape=[128256, 4096], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.define_tensor(shape=[4096], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv3 = fd.ops.reshape(tv0, new_shape=[4096])
    tv4 = fd.ops.broadcast(tv3, is_broadcast_dim=[False, True])
    tv5 = fd.ops.index_select(tv1, tv4, dim=0)
    tv6 = fd.ops.reshape(tv5, new_shape=[4, 1024, 4096])
    tv7 = fd.ops.cast(tv6, dtype=DataType.Float)
    tv11 = fd.ops.mul(tv7, tv7)
    tv12 = fd.ops.sum(tv11, dims=[2], dtype=DataType.Float)
    tv13 = fd.ops.broadcast(tv12, is_broadcast_dim=[False, False, True])
    tv14 = fd.ops.cast(tv13, dtype=DataType.Float)
    c53 = fd.ops.reciprocal(4096.00)
    tv15 = fd.ops.mul(tv14, c53)
    tv16 = fd.ops.add(tv15, 1.00000e-05)
    tv17 = fd.ops.rsqrt(tv16)
    tv18 = fd.ops.expand(tv17, shape=[4, 1024, 4096])
    tv19 = fd.ops.mul(tv7, tv18)
    tv8 = fd.ops.cast(tv2, dtype=DataType.Float)
    tv9 = fd.ops.broadcast(tv8, is_broadcast_dim=[True, True, False])
    tv10 = fd.ops.expand(tv9, shape=[4, 1024, 4096])
    tv20 = fd.ops.mul(tv19, tv10)
    tv21 = fd.ops.cast(tv20, dtype=DataType.BFloat16)
    fd.add_output(tv6)
    fd.add_output(tv17)
    fd.add_output(tv21)


with FusionDefinition() as fd:
    nvfuser_fusion(fd)

inputs = [
    torch.randint(0, 255, (4, 1024), dtype=torch.int64, device="cuda:0"),  # was make_tensor: negative ids
    torch.testing.make_tensor((128256, 4096), dtype=torch.bfloat16, device="cuda:0"),
    torch.testing.make_tensor((4096,), dtype=torch.bfloat16, device="cuda:0"),
]


def kernel_time_with_torch_profiler(callable, inputs):
    # Simple warm-up
    for _ in range(5):
        callable(inputs)

    time = 0.0
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        callable(inputs)

    for evt in prof.events():
        time += evt.device_time
    return time, prof


report_beside_seed(kernel_time_with_torch_profiler, fd, inputs, "saved script, fresh inputs", "nvfusion0_script.json")
