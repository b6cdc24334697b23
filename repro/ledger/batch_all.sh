#!/usr/bin/env bash
# One device command for issues #39 and #43 when device time is short: batch1 ((a), (c), the copy
# bandwidth), the peak benchmark, then batch2's (b) without the zoo while time is left; each step has
# its own limit so that whatever was recorded comes back.
#   source .gpu/activate.sh && bash repro/ledger/batch_all.sh OUT [SECONDS]
set -u
out=${1:?OUT}
budget=${2:-560}
start=$SECONDS
left() { echo $(( budget - (SECONDS - start) )); }
mkdir -p "$out"
timeout $(( $(left) - 60 )) bash repro/ledger/batch1.sh "$out/b1" > "$out/b1.log" 2>&1; echo "batch1: exit $? at $((SECONDS - start)) s"
if [ "$(left)" -gt 150 ]; then
  timeout 110 python3 benchmarks/bench_peak.py --rounds 2 > "$out/bench_peak.txt" 2>&1; echo "bench_peak: exit $? at $((SECONDS - start)) s"
fi
if [ "$(left)" -gt 200 ]; then
  ZOO=0 timeout $(( $(left) - 15 )) bash repro/ledger/batch2.sh "$out/b2" Qwen3-0.6B > "$out/b2.log" 2>&1; echo "batch2: exit $? at $((SECONDS - start)) s"
fi
