#!/bin/bash
# #28 session 34, command 1: where the replay's CUPTI start-up goes (probe), then py-spy of one replay
W=/tmp/p34; rm -rf $W; mkdir -p $W
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/spy .probe/prof/py_spy*.whl
python3 -m fusiondiff repro tests/data/fidelity/llama3/live.json --fusion '#3' -o $W/n3.py > $OUT/log.txt 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $OUT/log.txt
timeout 260 python3 .probe/prof/probe.py child $W/n3.py fresh_beside > /dev/null 2>&1  # first-ever start: caches warm
echo "warm-up at $(el)" >> $OUT/log.txt
timeout 300 python3 .probe/prof/drive.py $W/n3.py $OUT/probe.jsonl 3 > /dev/null 2> $OUT/drive.err; echo "drive rc $? at $(el)" >> $OUT/log.txt
for m in fresh_beside fresh_prof_first; do
  timeout 60 /tmp/spy/bin/py-spy record --native --threads --idle -r 200 --format raw -o $OUT/spy_$m.txt -- python3 .probe/prof/probe.py child $W/n3.py $m > $OUT/spy_$m.json 2> $OUT/spy_$m.err
  echo "spy $m rc $? at $(el)" >> $OUT/log.txt
done
cat $OUT/log.txt; python3 - $OUT/probe.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l); d.pop("second_window", None) if "error" not in d else None
    print(l.strip()[:400])
PY
