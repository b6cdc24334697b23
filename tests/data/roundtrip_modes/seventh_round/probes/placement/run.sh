#!/bin/bash
# #28 next probe (prepared in session 36, not run; ~3 min): placement of the inputs against the cold median
W=/tmp/p37; mkdir -p $W
for spec in roundtrip_modes/stablelm:6 roundtrip_modes/stablelm:9 fidelity/llama3:3; do
  f=${spec%%:*}; i=${spec##*:}; n=$(basename $f)_$i
  python3 -m fusiondiff repro tests/data/$f/live.json --fusion "#$i" -o $W/$n.py >> $OUT/log.txt 2>&1
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 150 python3 .probe/placement/probe.py $W/$n.py 7 > $OUT/place_$n.jsonl 2>> $OUT/place.err
  echo "$n rc $?" | tee -a $OUT/log.txt
done
python3 - $OUT/place_*.jsonl <<'PY'
import json, sys, collections, statistics
for path in sys.argv[1:]:
    by = collections.defaultdict(list)
    for line in open(path):
        r = json.loads(line); by[r["variant"]].append(r["median_ns"])
    print(path.split("/")[-1], {v: (round(statistics.median(m)), round(min(m)), round(max(m))) for v, m in by.items()})
PY
