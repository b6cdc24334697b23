#!/usr/bin/env bash
# Issue #52's recording on the GPU:
#   source .gpu/activate.sh && bash repro/thunder_report/record.sh OUT
# the program and Thunder's folders (record.py), then today's `fusiondiff replay` of every nvFuser
# script Thunder wrote (what a user would try first), each kept with its log.
set -u
out=${1:?OUT}
mkdir -p "$out"
timeout 300 python3 repro/thunder_report/record.py "$out" >"$out/record.log" 2>&1
echo "record: exit $?"
tail -n 30 "$out/record.log"
i=0
while IFS= read -r script; do
  i=$((i + 1))
  timeout 120 python3 -m fusiondiff replay "$script" -o "$out/replays/$i.json" >"$out/replays/$i.out" 2>&1
  echo "replay $i ($script): exit $?"
done < <(mkdir -p "$out/replays"; find "$out/thunder" -name '*nvfuser*.py' | sort)
