"""#28 probe (prepared in session 36, not run): does where a fusion's inputs sit in GPU memory move its
cold-L2 median by the 1.5-3 % seen between modes (stablelm nvFusion6: default +1.6 % over the
reference in 5 of 5 runs; handover, whose context is made as the process before exits, -1.5 %)?
Run with PYTORCH_NO_CUDA_MEMORY_CACHING=1 so every tensor is its own cudaMalloc. In one process:
each round, for each pad size (rotated), cudaMalloc a pad, then copy the inputs into fresh storage
(same sizes, strides, storage offsets), take 30 cold samples (fusiondiff's flush: zero 2xL2,
synchronize, execute; kineto), free both. 'orig' times the script's own inputs as a control.
Usage: probe.py SCRIPT ROUNDS  (one JSON line per round and placement, with the inputs' pointers)"""
import json, runpy, statistics, sys

import torch

script, rounds = sys.argv[1], int(sys.argv[2])
g = runpy.run_path(script)
fd, inputs = g["fd"], g["inputs"]
l2 = torch.cuda.get_device_properties(0).L2_cache_size
flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
PADS_MB = (0, 1, 3, 17, 129, 1031)


def relocate(x):
    if not (torch.is_tensor(x) and x.is_cuda):
        return x
    storage = torch.empty(x.untyped_storage().nbytes(), dtype=torch.uint8, device=x.device).untyped_storage()
    y = torch.empty(0, dtype=x.dtype, device=x.device).set_(storage, x.storage_offset(), x.size(), x.stride())
    y.copy_(x)
    return y


def sample(args, samples=30, warmup=5):
    for _ in range(warmup):
        fd.execute(args)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(samples):
            flush.zero_()
            torch.cuda.synchronize()
            fd.execute(args)
        torch.cuda.synchronize()
    events = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA and "nvfuser" in e.name]
    return [e.time_range.elapsed_us() * 1000 for e in events]


sample(inputs)  # the profiler's first window out of the way
variants = ["orig"] + [f"pad{mb}" for mb in PADS_MB]
for r in range(rounds):
    for variant in variants[r % len(variants):] + variants[: r % len(variants)]:
        pad = None
        if variant == "orig":
            args = inputs
        else:
            mb = int(variant.removeprefix("pad"))
            pad = torch.empty(mb << 20, dtype=torch.uint8, device="cuda") if mb else None
            args = [relocate(x) for x in inputs]
        kernels = sample(args)
        ptrs = [hex(x.data_ptr()) for x in args if torch.is_tensor(x) and x.is_cuda]
        print(json.dumps({"round": r, "variant": variant, "kernels": len(kernels),
                          "median_ns": statistics.median(kernels) if kernels else None, "ptrs": ptrs}), flush=True)
        del args, pad
        torch.cuda.synchronize()
