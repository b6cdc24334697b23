"""The live path of Thunder issue #1869, on today's stack (nvFuser 0.2.36 direct bindings, Thunder 0.2.6).

Kept from the seed: the model (litgpt Llama-3-8B, 3 layers, block 1024, batch 4, bf16, thunderfx),
``last_used`` of nvFusion0's wrapper, and the seed's measurement (5 warm-ups, one profiled call,
sum of device_time over every profiler event).
Changed so that it runs: nvFusion0 now also fuses the embedding and takes 3 inputs (token ids,
embedding table, norm weight), so the seed's 2 hand-made inputs fail ("Could not find value T2 ...");
the real inputs are kept by compiling with ``nv_store_fusion_inputs=True``.
Added beside it: fusiondiff's protocol on the same FusionDefinition and inputs.

    python repro/timingtest/nvfusion_kerneltime.py [OUT.json]
"""

from functools import partial

import torch
from beside_the_seed import report_beside_seed  # this folder: run the script as a file
from litgpt import GPT, Config
from torch.profiler import ProfilerActivity, profile
from torch.testing import make_tensor


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


cfg = Config.from_name("Llama-3-8B")
cfg.n_layer = 3
cfg.block_size = 1024
batch_dim = 4

torch.set_default_dtype(torch.bfloat16)
make = partial(make_tensor, low=0, high=255, device="cuda", dtype=torch.int64)

with torch.device("cuda"):
    model = GPT(cfg)
    shape = (batch_dim, cfg.block_size)
    x = make(shape)

from thunder.dynamo import thunderfx  # noqa: E402

cm = thunderfx(model, nv_store_fusion_inputs=True)
cm(x)

trace = cm.last_traces[0]
bsyms = [bsym for bsym in trace.bound_symbols if "nvFusion" in bsym.sym.name]
nvfuser_callable = bsyms[0]._call_ctx[bsyms[0].sym.name]
fd = nvfuser_callable.last_used
inputs = list(nvfuser_callable.last_inputs)  # idx int64 [4, 1024], table bf16 [128256, 4096], weight bf16 [4096]

torch.cuda.synchronize()
report_beside_seed(kernel_time_with_torch_profiler, fd, inputs, "live last_used, real inputs", "nvfusion0_live.json")
