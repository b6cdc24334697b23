"""Alternates the conditions of probe.py for ROUNDS rounds; one JSON line per replay into OUT."""
import json, os, subprocess, sys, time
SCRIPT, OUT, ROUNDS = sys.argv[1], sys.argv[2], int(sys.argv[3])
HERE = os.path.dirname(os.path.abspath(__file__)); PY = sys.executable
log = open(OUT, "a")
def say(obj):
    line = json.dumps(obj); print(line, flush=True); log.write(line + "\n"); log.flush()
def server(env_extra):
    env = dict(os.environ, **env_extra)
    p = subprocess.Popen([PY, f"{HERE}/probe.py", "server", SCRIPT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    say({"server": env_extra, **json.loads(p.stdout.readline())}); return p
for rnd in range(ROUNDS):
    for mode in ("fresh_prof_first", "fresh_beside"):
        t = time.time(); r = subprocess.run([PY, f"{HERE}/probe.py", "child", SCRIPT, mode], capture_output=True, text=True, timeout=120)
        line = r.stdout.strip().splitlines()
        say({"round": rnd, **(json.loads(line[-1]) if line else {"mode": mode, "error": r.stderr[-300:]}), "wall": round(time.time() - t, 2)})
    for warm in ({}, {"PROBE_CPU_WARM": "1"}):
        srv = server(warm)
        modes = ("fork_prof_first", "fork_script_first", "fork_beside", "fork_script_only", "fork_ct_ts_first", "fork_ct_kernel_first", "fork_ct_kernel_beside") if not warm else ("fork_prof_first", "fork_beside")
        for mode in modes:
            t = time.time(); srv.stdin.write(mode + "\n"); srv.stdin.flush()
            say({"round": rnd, "warm": bool(warm), **json.loads(srv.stdout.readline()), "wall": round(time.time() - t, 2)})
        srv.stdin.close(); srv.wait(30)
