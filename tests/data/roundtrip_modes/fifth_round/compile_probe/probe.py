"""#28 probe (session 35): where a forked replay's compile time goes. For each repro script: the
script's run (its compile and first launch) and its minor page faults, in a fresh process (imports
done before timing), in children forked from a server that imported torch, nvfuser_direct and
torch._inductor.config (plain), from one that also warmed NVRTC through ctypes (nvrtc, no CUDA call),
and from one started with NVFUSER_ENABLE=kernel_db: a first child compiles with an empty kernel
database in its own TMPDIR (kdb_write), a second one with the same TMPDIR finds the kernels there
(kdb_read). Usage: probe.py drive OUT.jsonl ROUNDS SCRIPT...   (the other modes are its own children)"""
import ctypes, json, os, resource, runpy, subprocess, sys, tempfile, time

HERE = os.path.abspath(__file__)


def imports():
    import torch, nvfuser_direct, torch._inductor.config  # noqa: F401


def warm_nvrtc():
    path = next((l.split()[-1] for l in open("/proc/self/maps") if "libnvrtc." in l), None)
    if path is None:
        return "no libnvrtc mapped"
    lib = ctypes.CDLL(path); prog = ctypes.c_void_p()
    src = b'extern "C" __global__ void k(float* x) { x[threadIdx.x] += 1.0f; }'
    rc1 = lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"k.cu", 0, None, None)
    opts = (ctypes.c_char_p * 1)(b"--gpu-architecture=sm_90")
    rc2 = lib.nvrtcCompileProgram(prog, 1, opts)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return f"{os.path.basename(path)} rc {rc1} {rc2}"


def db_files():
    d = os.path.join(tempfile.gettempdir(), "nvfuser_kernel_db")
    return sorted(os.listdir(d)) if os.path.isdir(d) else None


def measure(script, mode):
    import torch
    tempfile.tempdir = None  # read TMPDIR again (a forked child's own)
    before = db_files()
    t = time.perf_counter(); torch.empty(1, device="cuda"); ctx = time.perf_counter() - t
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    t = time.perf_counter(); runpy.run_path(script); s = time.perf_counter() - t
    f1 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    after = db_files()
    return {"mode": mode, "script": os.path.basename(script), "context_s": round(ctx, 3), "script_s": round(s, 3),
            "minflt": f1 - f0, "threads": len(os.listdir("/proc/self/task")),
            "db_before": None if before is None else len(before), "db_after": None if after is None else len(after)}


def serve(kind):
    imports(); note = warm_nvrtc() if kind == "nvrtc" else None
    print(json.dumps({"ready": kind, "note": note, "NVFUSER_ENABLE": os.environ.get("NVFUSER_ENABLE")}), flush=True)
    for line in sys.stdin:
        script, tmp, label = line.rstrip("\n").split("\t"); rd, wr = os.pipe(); pid = os.fork()
        if pid == 0:
            os.close(rd)
            if tmp:
                os.environ["TMPDIR"] = tmp
            try:
                out = measure(script, label)
            except BaseException as exc:  # noqa: BLE001
                out = {"mode": label, "script": os.path.basename(script), "error": repr(exc)[:300]}
            os.write(wr, (json.dumps(out) + "\n").encode()); os._exit(0)
        os.close(wr); data = b""
        while chunk := os.read(rd, 65536):
            data += chunk
        os.close(rd); os.waitpid(pid, 0); print(data.decode().strip(), flush=True)


def drive(out, rounds, scripts):
    log = open(out, "a")
    def say(d):
        line = json.dumps(d); print(line, flush=True); log.write(line + "\n"); log.flush()
    for name in ("enabled", "defrag"):
        try:
            say({"thp_" + name: open(f"/sys/kernel/mm/transparent_hugepage/{name}").read().strip()})
        except OSError as exc:
            say({"thp_" + name: repr(exc)})
    for rnd in range(rounds):
        servers = {}
        for kind in ("plain", "nvrtc", "kdb"):
            env = dict(os.environ)
            if kind == "kdb":
                env["NVFUSER_ENABLE"] = "kernel_db"
            p = subprocess.Popen([sys.executable, HERE, "serve", kind], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
            say({"round": rnd, **json.loads(p.stdout.readline())}); servers[kind] = p
        for script in scripts:
            r = subprocess.run([sys.executable, HERE, "fresh", script], capture_output=True, text=True, timeout=180)
            lines = r.stdout.strip().splitlines()
            say({"round": rnd, **(json.loads(lines[-1]) if lines else {"mode": "fresh", "error": r.stderr[-300:]})})
            for kind, p in servers.items():
                if kind == "kdb":
                    tmp = tempfile.mkdtemp(prefix="kdb")
                    jobs = [(tmp, "kdb_write"), (tmp, "kdb_read")]
                else:
                    jobs = [("", f"fork_{kind}")]
                for tmp, label in jobs:
                    p.stdin.write(f"{script}\t{tmp}\t{label}\n"); p.stdin.flush()
                    say({"round": rnd, **json.loads(p.stdout.readline())})
        for p in servers.values():
            p.stdin.close(); p.wait(30)


if __name__ == "__main__":
    if sys.argv[1] == "drive":
        drive(sys.argv[2], int(sys.argv[3]), sys.argv[4:])
    elif sys.argv[1] == "serve":
        serve(sys.argv[2])
    elif sys.argv[1] == "fresh":
        imports(); print(json.dumps(measure(sys.argv[2], "fresh")), flush=True)
