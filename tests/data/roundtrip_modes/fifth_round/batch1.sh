#!/bin/bash
# #28 session 35, command 1: bytecode on this image; floors of stablelm and phi-2; the compile probe
W=/tmp/p35; rm -rf $W; mkdir -p $W
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
{
python3 - <<'PY'
import os, sys, importlib.util
for m in ("torch", "sympy", "nvfuser_direct", "thunder"):
    s = importlib.util.find_spec(m); d = os.path.dirname(s.origin)
    pc = os.path.join(d, "__pycache__")
    print(m, d, "pycache:", len(os.listdir(pc)) if os.path.isdir(pc) else None, "writable:", os.access(d, os.W_OK))
print("sys.flags.dont_write_bytecode", sys.flags.dont_write_bytecode, "PYTHONDONTWRITEBYTECODE", os.environ.get("PYTHONDONTWRITEBYTECODE"), "PYTHONPYCACHEPREFIX", os.environ.get("PYTHONPYCACHEPREFIX"))
PY
for i in 1 2; do /usr/bin/time -f "plain import run $i: %e s" python3 -c "import torch, nvfuser_direct, torch._inductor.config"; done
for i in 1 2; do PYTHONPYCACHEPREFIX=$W/pyc /usr/bin/time -f "pycacheprefix import run $i: %e s" python3 -c "import torch, nvfuser_direct, torch._inductor.config"; done
python3 -X importtime -c "import torch, nvfuser_direct" 2> $W/imp.txt; sort -t'|' -k2 -n -r $W/imp.txt | head -12
} > $OUT/pyc.txt 2>&1; echo "pyc done at $(el)" | tee -a $OUT/log.txt
B="python3 benchmarks/bench_roundtrip.py"
timeout 80 $B tests/data/roundtrip_modes/stablelm/live.json --workdir $W/stablelm --modes floor --gpus 0 --limit-s floor=70 > $OUT/stablelm_floor.txt 2> $OUT/stablelm_floor.err; echo "stablelm floor rc $? at $(el)" | tee -a $OUT/log.txt
timeout 80 $B tests/data/roundtrip_modes/phi2/live.json --workdir $W/phi2 --modes floor --gpus 0 --limit-s floor=70 > $OUT/phi2_floor.txt 2> $OUT/phi2_floor.err; echo "phi2 floor rc $? at $(el)" | tee -a $OUT/log.txt
S=""
for spec in fidelity/llama3:0 fidelity/llama3:16 roundtrip_modes/stablelm:0 roundtrip_modes/stablelm:1 roundtrip_modes/stablelm:5 roundtrip_modes/stablelm:7 roundtrip_modes/phi2:0 roundtrip_modes/phi2:4 roundtrip_modes/phi2:6; do
  f=${spec%%:*}; i=${spec##*:}; n=$(basename $f)_$i
  python3 -m fusiondiff repro tests/data/$f/live.json --fusion "#$i" -o $W/$n.py >> $OUT/log.txt 2>&1; S="$S $W/$n.py"
done
L=$(( 520 - ($(date +%s) - T0) ))
timeout $L python3 .probe/c35/probe.py drive $OUT/compile.jsonl 1 $S > /dev/null 2> $OUT/compile.err; echo "probe rc $? at $(el)" | tee -a $OUT/log.txt
tar czf $OUT/p35a.tgz -C $W --exclude='*.safetensors' --exclude='replays' --exclude='scripts' --exclude='replay.json' --exclude=pyc stablelm phi2 2>/dev/null
python3 - $OUT/compile.jsonl <<'PY'
import json, sys, collections
rows = [json.loads(l) for l in open(sys.argv[1])]
by = collections.defaultdict(dict)
for r in rows:
    if "script_s" in r: by[r["script"]][r["mode"]] = (r["script_s"], r["minflt"], r.get("db_after"))
    elif "mode" in r or "error" in str(r): print(r)
    else: print(r)
for s, v in by.items():
    print(f"{s:16s}", "  ".join(f"{m} {x[0]:.2f}s/{x[1]}f/db{x[2]}" for m, x in v.items()))
PY
grep -h -E "median|floor" $OUT/*_floor.txt | head; tail -2 $OUT/*_floor.err
