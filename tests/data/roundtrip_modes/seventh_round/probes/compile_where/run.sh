#!/bin/bash
# #28 next probe (prepared in session 36, not run; ~2 min): where a replay's multi-second compile goes
# (llama3 #16 5.8 s, stablelm #8 5.1 s; the kernel database showed NVRTC is not it). py-spy --native
# of each repro script's run in a fresh process, reduced to nvFuser's functions.
W=/tmp/cw37; mkdir -p $W
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/spy .probe/prof/py_spy*.whl
for spec in fidelity/llama3:16 roundtrip_modes/stablelm:8 roundtrip_modes/stablelm:3; do
  f=${spec%%:*}; i=${spec##*:}; n=$(basename $f)_$i
  python3 -m fusiondiff repro tests/data/$f/live.json --fusion "#$i" -o $W/$n.py >> $OUT/log.txt 2>&1
  /usr/bin/time -f "$n wall %e s, user %U s, sys %S s" python3 $W/$n.py >> $OUT/log.txt 2>&1
  timeout 90 /tmp/spy/bin/py-spy record --native --threads -r 250 --format raw -o $W/$n.raw -- python3 $W/$n.py >> $OUT/log.txt 2>&1
  python3 .probe/compile_where/reduce_native.py $W/$n.raw 40 > $OUT/where_$n.txt; echo "$n rc $?" | tee -a $OUT/log.txt
done
head -n 25 $OUT/where_*.txt
