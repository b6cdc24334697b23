#!/bin/bash
# #28 batch 1: the round trip's modes on llama3's fidelity step, then the GPU round-trip test
W=/tmp/rt28; rm -rf $W; mkdir -p $W
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,utilization.gpu --format=csv > $W/smi.txt
timeout 450 python3 benchmarks/bench_roundtrip.py tests/data/fidelity/llama3/live.json --workdir $W/llama3 \
  --modes floor,pipeline,reference,ahead --gpus 0 --limit-s floor=50,pipeline=80,reference=170,ahead=110 \
  --json $W/llama3/modes.json > $W/llama3.txt 2> $W/llama3.err
echo "bench rc $? at $(( $(date +%s) - T0 )) s" >> $W/llama3.txt
timeout $(( 560 - ($(date +%s) - T0) )) python3 -m pytest -q -p no:cacheprovider -m gpu tests/gpu/test_roundtrip.py --basetemp $W/gputest > $W/gputest.txt 2>&1
echo "gpu test rc $? at $(( $(date +%s) - T0 )) s" >> $W/gputest.txt
tar czf $OUT/rt28.tgz -C $W --exclude='*.safetensors' .
cat $W/llama3.txt; tail -5 $W/gputest.txt; tail -20 $W/llama3.err
