"""#28 probe: imports, profiler start overlapping the compile (thread), process exit cost."""
import json, os, sys, time, threading
mode = sys.argv[1]
T = {"spawn_to_main": None}
t = time.time(); T["t_main"] = t
import torch; T["torch"] = time.time() - t
t = time.time()
from nvfuser_direct import FusionDefinition, DataType
T["nvfuser_direct"] = time.time() - t
t = time.time(); torch.empty(1, device="cuda"); torch.cuda.synchronize(); T["context"] = time.time() - t

def profiler_once():
    t = time.time()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]):
        pass
    T["profiler_init"] = time.time() - t

def compile_run():
    t = time.time()
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
        b = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16)
        x = fd.ops.cast(a, DataType.Float)
        s = fd.ops.sum(fd.ops.mul(x, x), dims=[1])
        r = fd.ops.rsqrt(fd.ops.add(fd.ops.div(s, 4096.0), 1e-5))
        y = fd.ops.mul(x, fd.ops.broadcast(r, [False, True]))
        y = fd.ops.mul(y, fd.ops.cast(fd.ops.broadcast(b, [True, False]), DataType.Float))
        fd.add_output(fd.ops.cast(y, DataType.BFloat16))
    A = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16); B = torch.randn(4096, device="cuda", dtype=torch.bfloat16)
    fd.execute([A, B]); torch.cuda.synchronize()
    T["compile"] = time.time() - t
    return fd, A, B

t = time.time()
if mode == "thread":
    th = threading.Thread(target=profiler_once); th.start()
    fd, A, B = compile_run(); th.join()
else:
    profiler_once(); fd, A, B = compile_run()
T["prof_and_compile_wall"] = time.time() - t
# samples: a profiler window around 30 executes
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as p:
    for _ in range(30):
        fd.execute([A, B])
    torch.cuda.synchronize()
ks = [e for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA]
T["kernel_events"] = len(ks)
T["kernel_us_median"] = sorted(e.device_time for e in ks)[len(ks)//2] if ks else None
T["t_end"] = time.time()
print("P28 " + json.dumps(T), flush=True)
if len(sys.argv) > 2 and sys.argv[2] == "_exit":
    os._exit(0)
