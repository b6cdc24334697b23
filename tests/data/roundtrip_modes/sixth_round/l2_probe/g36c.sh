#!/bin/bash
# #28 next probe (prepared in session 35, not run): cold-L2 samples against the host's gap after the flush
W=/tmp/p36; mkdir -p $W
for spec in roundtrip_modes/stablelm:6 roundtrip_modes/stablelm:3 fidelity/llama3:3; do
  f=${spec%%:*}; i=${spec##*:}; n=$(basename $f)_$i
  python3 -m fusiondiff repro tests/data/$f/live.json --fusion "#$i" -o $W/$n.py >> $OUT/log.txt 2>&1
  timeout 150 python3 .probe/l2/probe.py $W/$n.py 8 > $OUT/l2_$n.jsonl 2>> $OUT/l2.err; echo "$n rc $?" | tee -a $OUT/log.txt
done
python3 - $OUT/l2_*.jsonl <<'PY'
import json, sys, collections, statistics
for path in sys.argv[1:]:
    by = collections.defaultdict(list)
    for line in open(path):
        r = json.loads(line); by[r["variant"]].append(r["median_ns"])
    print(path.split("/")[-1], {v: round(statistics.median(m)) for v, m in by.items()})
PY
