#!/usr/bin/env bash
# Issue #39's case (b): a training step of a model no other capture uses, and its round trip; then the zoo.
set -u
fusiondiff() { python3 -m fusiondiff "$@"; }
out=${1:?OUT}
model=${2:-Qwen3-0.6B}
mkdir -p "$out/train"
time fusiondiff capture repro/fidelity/train_step.py -o "$out/train/live.json" -- --model "$model" --layers 1 --block 256 --batch 2 --steps 2 2>&1 | tail -3
time fusiondiff roundtrip "$out/train/live.json" -o "$out/train/rt" > "$out/train/roundtrip.txt" 2> "$out/train/roundtrip.err"
echo "roundtrip: exit $?"; tail -30 "$out/train/roundtrip.txt"
if [ "${ZOO:-1}" = 1 ]; then
  time python3 -m repro.zoo.run_zoo "$out/zoo" 2>&1 | tail -20
fi
