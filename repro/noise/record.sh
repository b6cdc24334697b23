#!/usr/bin/env bash
# One thunderfx training step captured live in N separate processes and replayed N times from
# fusiondiff's repro scripts (each replay a fresh process), for the between-process spread of
# kernel and host times (issue #48's A/A recording):
#   source .gpu/activate.sh && bash repro/noise/record.sh OUT [N] [BUDGET_S]
# The program is repro/fidelity/train_step.py on litgpt's pythia-160m config (2 layers, block 256,
# batch 2, 2 steps), a model none of the repository's other recordings use. Stops starting new
# processes once BUDGET_S seconds (default 420) have passed, so it fits one device call.
set -u
out=${1:?OUT}
n=${2:-5}
budget=${3:-420}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv >"$out/gpu.txt"
program=(repro/fidelity/train_step.py --model pythia-160m --layers 2 --block 256 --batch 2 --steps 2)
started=$SECONDS
for i in $(seq 1 "$n"); do
  [ $((SECONDS - started)) -lt "$budget" ] || { echo "budget reached before live $i"; break; }
  t=$SECONDS
  python3 -m fusiondiff capture "${program[@]}" -o "$out/live_$i.json" >"$out/live_$i.log" 2>&1
  echo "live $i: exit $? in $((SECONDS - t)) s"
done
python3 -m fusiondiff repro "$out/live_1.json" -o "$out/repro" >"$out/repro.log" 2>&1
echo "repro of live_1: exit $?"
for i in $(seq 1 "$n"); do
  [ $((SECONDS - started)) -lt "$budget" ] || { echo "budget reached before replay $i"; break; }
  t=$SECONDS
  python3 -m fusiondiff replay "$out/repro" -o "$out/replay_$i.json" >"$out/replay_$i.out" 2>&1
  echo "replay $i: exit $? in $((SECONDS - t)) s"
done
echo "total $((SECONDS - started)) s"
