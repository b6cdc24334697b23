#!/usr/bin/env bash
# Issue #52's recording on the GPU:
#   source .gpu/activate.sh && bash repro/thunder_report/record.sh OUT
# the program and Thunder's folders (record.py), then `fusiondiff replay` of every nvFuser
# script Thunder wrote one at a time (what a user would try first), each kept with its log; then each
# folder replayed whole and diffed against the live capture.
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
# each of Thunder's folders replayed as it is (one nvFuser script per region, named after it), with
# Thunder's printed medians, then the diff against the live capture
for folder in report repros; do
  stream=()
  [ "$folder" = report ] && stream=(--thunder-stream "$out/thunder/report.txt")
  timeout 300 python3 -m fusiondiff replay "$out/thunder/$folder" -o "$out/replay_$folder.json" "${stream[@]}" \
    >"$out/replay_$folder.out" 2>&1
  echo "replay $folder: exit $?"
  COLUMNS=100 timeout 120 python3 -m fusiondiff diff "$out/live.json" "$out/replay_$folder.json" >"$out/diff_$folder.txt" 2>&1
  echo "diff $folder: exit $?"
done
