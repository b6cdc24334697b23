"""#28 probe (prepared in session 35, not run): does a cold-L2 sample depend on how long the host
takes between the flush's synchronize and the fusion's launch? Hypothesis for stablelm nvFusion6
(+2.1/+2.8 % in the default round trip, whose host path per call was ~13 us shorter than the
reference's): the flush leaves L2 full of dirty lines, and a kernel launched sooner competes with
their write-back. Variants, alternated over rounds, in one process, 30 samples each (kineto):
  sync          zero_() the 2xL2 buffer, synchronize, execute (fusiondiff's cold protocol)
  sync_spin20   ... then spin 20 us on the host before the execute
  sync_spin200  ... 200 us
  clean         zero_(), then read a second 2xL2 buffer (L2 left holding clean lines), synchronize, execute
Usage: probe.py SCRIPT ROUNDS  (SCRIPT: a fusiondiff repro; one JSON line per variant and round)"""
import json, runpy, statistics, sys, time

import torch

script, rounds = sys.argv[1], int(sys.argv[2])
g = runpy.run_path(script)  # defines fd and inputs, executes once (the compile)
fd, inputs = g["fd"], g["inputs"]
l2 = torch.cuda.get_device_properties(0).L2_cache_size
dirty = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
clean = torch.ones(2 * l2 // 4, dtype=torch.float32, device="cuda")


def spin(us):
    end = time.perf_counter_ns() + us * 1000
    while time.perf_counter_ns() < end:
        pass


def before(variant):
    dirty.zero_()
    if variant == "clean":
        clean.max()
    torch.cuda.synchronize()
    if variant.startswith("sync_spin"):
        spin(int(variant.removeprefix("sync_spin")))


def run(variant, samples=30, warmup=5):
    for _ in range(warmup):
        fd.execute(inputs)
    torch.cuda.synchronize()
    host = []
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(samples):
            before(variant)
            t = time.perf_counter_ns(); fd.execute(inputs); host.append(time.perf_counter_ns() - t)
        torch.cuda.synchronize()
    events = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    kernels = [e.time_range.elapsed_us() * 1000 for e in events if "nvfuser" in e.name]
    if not kernels:
        print("no nvfuser kernel among", sorted({e.name[:80] for e in events})[:8], file=sys.stderr)
    return {"variant": variant, "kernels": len(kernels), "median_ns": statistics.median(kernels) if kernels else None,
            "min_ns": min(kernels) if kernels else None, "host_median_ns": statistics.median(host)}


run("sync")  # the profiler's first window (its imports) out of the way
for r in range(rounds):
    order = ["sync", "sync_spin20", "sync_spin200", "clean"]
    for variant in order[r % 4:] + order[: r % 4]:
        print(json.dumps({"round": r, **run(variant)}), flush=True)
