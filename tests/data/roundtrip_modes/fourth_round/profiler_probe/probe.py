"""#28 fourth round: where do a replay's 3-4 s of CUPTI start-up go? One replay's pieces (CUDA
context, first torch.profiler window, nvFusion3's repro script = compile + first run) timed
in a fresh process and in a child forked from a server that imported torch and nvfuser_direct;
profiler alone, after the script, or in a thread beside it (fusiondiff's forked_turn today).
A thread sleeping 1 ms in a loop measures how long it could not get the GIL. Rounds alternate."""
import json, os, runpy, sys, threading, time

SCRIPT = sys.argv[2] if len(sys.argv) > 2 else None


class GilWatch:
    def __init__(self):
        self.late, self.worst, self.stop = 0.0, 0.0, False
        self.t = threading.Thread(target=self._run, daemon=True); self.t.start()

    def _run(self):
        while not self.stop:
            t = time.perf_counter(); time.sleep(0.001); d = time.perf_counter() - t - 0.001
            if d > 0.005:
                self.late += d; self.worst = max(self.worst, d)

    def end(self):
        self.stop = True; self.t.join(); return round(self.late, 3), round(self.worst, 3)


def window(torch, kernel=False):
    t0 = time.perf_counter()
    p = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA])
    p.__enter__(); t1 = time.perf_counter()
    if kernel:
        (torch.ones(16, device="cuda") + 1).sum(); torch.cuda.synchronize()
    p.__exit__(None, None, None); t2 = time.perf_counter()
    out = {"enter": round(t1 - t0, 3), "exit": round(t2 - t1, 3)}
    st = getattr(getattr(p, "profiler", None), "_stats", None)
    if st is not None:
        out.update(prep=st.profiler_prepare_call_duration_us / 1e6, enable=st.profiler_enable_call_duration_us / 1e6,
                   disable=st.profiler_disable_call_duration_us / 1e6)
    if kernel:
        try:
            out["kernels"] = sum(1 for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA)
        except Exception as exc:  # noqa
            out["kernels"] = repr(exc)[:80]
    return out


def preinit(kind):
    """CUPTI's own start-up through ctypes, which lets go of the GIL (torch's calls keep it)."""
    import ctypes
    path = next((l.split()[-1] for l in open("/proc/self/maps") if "libcupti" in l), None)
    if path is None:
        return {"error": "no libcupti mapped"}
    lib = ctypes.CDLL(path); t = time.perf_counter()
    if kind == "ts":
        ts = ctypes.c_uint64(); rc, rc2 = lib.cuptiGetTimestamp(ctypes.byref(ts)), None
    else:
        rc, rc2 = lib.cuptiActivityEnable(10), lib.cuptiActivityDisable(10)
    return {"lib": os.path.basename(path), "rc": rc, "rc2": rc2, "s": round(time.perf_counter() - t, 3)}


def replay(mode):
    """One replay's pieces in this process; torch/nvfuser_direct may already be imported."""
    r = {"mode": mode}; c = time.perf_counter; cpu0 = os.times()
    t = c(); import torch, nvfuser_direct  # noqa
    r["imports"] = round(c() - t, 3)
    g = GilWatch()
    t = c(); torch.empty(1, device="cuda"); r["context"] = round(c() - t, 3)
    if "_ct_" in mode:
        kind = mode.split("_ct_")[1].split("_")[0]
        if mode.endswith("first"):
            r["pre"] = preinit(kind)
            t = c(); r["prof"] = window(torch); r["prof_s"] = round(c() - t, 3)
            t = c(); runpy.run_path(SCRIPT); r["script_s"] = round(c() - t, 3)
        else:
            box = {}
            def run():
                t = c(); box["pre"] = preinit(kind); box["prof"] = window(torch); box["span"] = round(c() - t, 3)
            th = threading.Thread(target=run); t = c(); th.start()
            runpy.run_path(SCRIPT); r["script_s"] = round(c() - t, 3)
            th.join(); r["both_s"] = round(c() - t, 3); r.update(pre=box["pre"], prof=box["prof"], prof_s=box["span"])
    elif mode.endswith("prof_first"):
        t = c(); r["prof"] = window(torch); r["prof_s"] = round(c() - t, 3)
        t = c(); runpy.run_path(SCRIPT); r["script_s"] = round(c() - t, 3)
    elif mode.endswith("script_first"):
        t = c(); runpy.run_path(SCRIPT); r["script_s"] = round(c() - t, 3)
        t = c(); r["prof"] = window(torch); r["prof_s"] = round(c() - t, 3)
    elif mode.endswith("beside"):
        box = {}
        def run():
            t = c(); box["prof"] = window(torch); box["span"] = round(c() - t, 3)
        th = threading.Thread(target=run); t = c(); th.start()
        runpy.run_path(SCRIPT); r["script_s"] = round(c() - t, 3)
        th.join(); r["both_s"] = round(c() - t, 3); r["prof"] = box["prof"]; r["prof_s"] = box["span"]
    elif mode.endswith("script_only"):
        t = c(); runpy.run_path(SCRIPT); r["script_s"] = round(c() - t, 3)
    r["gil_late_s"], r["gil_worst_s"] = g.end()
    r["second_window"] = window(torch, kernel=True)
    cpu1 = os.times(); r["cpu_user_s"] = round(cpu1.user - cpu0.user, 2); r["cpu_sys_s"] = round(cpu1.system - cpu0.system, 2)
    return r


if __name__ == "__main__":
    if sys.argv[1] == "child":          # fresh process: python probe.py child SCRIPT MODE
        print(json.dumps(replay(sys.argv[3])), flush=True)
    elif sys.argv[1] == "server":       # python probe.py server SCRIPT; reads modes on stdin
        t = time.perf_counter(); import torch, nvfuser_direct  # noqa
        if os.environ.get("PROBE_CPU_WARM"):
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
                pass
        print(json.dumps({"server_imports": round(time.perf_counter() - t, 3)}), flush=True)
        for line in sys.stdin:
            mode = line.strip()
            rd, wr = os.pipe(); pid = os.fork()
            if pid == 0:
                os.close(rd)
                try:
                    out = replay(mode)
                except BaseException as exc:  # noqa
                    out = {"mode": mode, "error": repr(exc)[:300]}
                os.write(wr, (json.dumps(out) + "\n").encode()); os._exit(0)
            os.close(wr); data = b""
            while chunk := os.read(rd, 65536):
                data += chunk
            os.close(rd); os.waitpid(pid, 0); print(data.decode().strip(), flush=True)
