"""#28: does an idle CUDA context held by another process on the GPU (as the context/forked modes'
spares hold) move a replay's samples? nvFusion3 of llama3 (records 3, 7, 11) moved +0.5..+1.5 %
in those modes, never between two references. Conditions alternated, each replay a fresh process."""
import os, re, subprocess, sys, time
P, OUT = sys.argv[1], sys.argv[2]
HOLDER = r'''
import sys, torch
torch.cuda.init(); x = torch.empty(1 << 20, device="cuda"); torch.cuda.synchronize()
if sys.argv[1] == "prof":
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]):
        pass
print("ready", flush=True)
sys.stdin.read()
'''
open(f"{P}/holder.py", "w").write(HOLDER)
log = open(f"{OUT}/ctx_probe.txt", "a")
def say(m):
    print(m, flush=True); log.write(m + "\n"); log.flush()
def replay(script, tag):
    t = time.time()
    r = subprocess.run([sys.executable, "-m", "fusiondiff", "replay", script, "-o", f"{P}/{tag}.json"], capture_output=True, text=True, timeout=90)
    m = re.findall(r"fusion0: (\d+) kernel\(s\), ([\d.]+) us \(iqr ([\d.]+) %\) over (\d+) ([\w-]+) samples", r.stderr)
    return (m[0] if m else r.stderr[-300:]), time.time() - t
for fusion in sys.argv[3].split(","):
    script = f"{P}/{fusion.strip('#')}.py"
    subprocess.run([sys.executable, "-m", "fusiondiff", "repro", "tests/data/fidelity/llama3/live.json", "--fusion", fusion, "-o", script], check=True)
    for rnd in range(int(sys.argv[4])):
        for cond in ("none", "ctx", "prof"):
            holders = []
            if cond != "none":
                holders = [subprocess.Popen([sys.executable, f"{P}/holder.py", cond], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(3)]
                for h in holders:
                    h.stdout.readline()
                time.sleep(0.5)
            res, wall = replay(script, f"{fusion.strip('#')}_{cond}_{rnd}")
            for h in holders:
                h.stdin.close(); h.wait(30)
            say(f"{fusion} round {rnd} {cond:5s} {res} ({wall:.1f} s)")
