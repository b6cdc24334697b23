#!/usr/bin/env bash
# Issue #43's H200 half alone, as short as it goes (the H100's half is tests/data/h100):
#   source .gpu/activate.sh && bash repro/ledger/batch4.sh OUT
# the seed forward with this GPU's measured peak, diffed against the H100's capture (both peaks
# measured: the kernels beyond the noise floor are named under the GPU), and the peak's cost.
set -u
out=${1:?OUT}
mkdir -p "$out/seed"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$out/gpu.txt"
python3 repro/ledger/copy_bandwidth.py >> "$out/gpu.txt" 2>&1
timeout 240 python3 repro/ledger/seed_forward.py "$out/seed/live_forward.json" > "$out/seed/capture.log" 2>&1
echo "seed capture: exit $?"
h100=tests/data/h100/seed_forward/live_forward.json
python3 -m fusiondiff diff "$h100" "$out/seed/live_forward.json" > "$out/seed/diff_vs_h100.txt" 2>&1
echo "diff h100 vs this GPU: exit $?"
python3 -m fusiondiff show "$out/seed/live_forward.json" > "$out/seed/show.txt" 2>&1
timeout 100 python3 benchmarks/bench_peak.py --rounds 1 > "$out/bench_peak.txt" 2>&1
echo "bench_peak: exit $?"
