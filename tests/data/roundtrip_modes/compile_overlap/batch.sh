#!/bin/bash
# #28 session 32, command 2: context (compile beside the profiler start and the last exit, os._exit) against the reference, three sessions on one GPU
W=/tmp/rt32; rm -rf $W; mkdir -p $W/llama3 $W/phi2 $W/stablelm
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }; left() { echo $(( 555 - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,utilization.gpu --format=csv > $OUT/smi.txt
B="python3 benchmarks/bench_roundtrip.py"
run() { # dir live ctx_limit ref_limit
  D=$1; L=$(left); [ $L -lt 60 ] && { echo "no time for $D at $(el)" | tee -a $OUT/log.txt; return; }
  REF=$4; [ $(( L - $3 - 20 )) -lt $REF ] && REF=$(( L - $3 - 20 ))
  timeout $(( L - 5 )) $B $2 --workdir $W/$D --modes context,reference --gpus 0 --limit-s context=$3,reference=$REF > $OUT/$D.txt 2> $W/$D.err
  echo "$D rc $? at $(el) (reference limit $REF)" | tee -a $OUT/log.txt
}
run llama3 tests/data/fidelity/llama3/live.json 80 185
run phi2 tests/data/roundtrip_modes/phi2/live.json 55 125
run stablelm tests/data/roundtrip_modes/stablelm/live.json 60 140
tar czf $OUT/rt32.tgz -C $W --exclude='*.safetensors' --exclude='replays' .
cat $OUT/*.txt | grep -v "^ *phases" | head -40
