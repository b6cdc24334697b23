#!/bin/bash
# #28 next GPU command 1 (about 560 s): llama3 in the forked and context modes and the reference twice; phi-2 forked beside its reference
W=/tmp/rt33; rm -rf $W; mkdir -p $W/llama3 $W/phi2
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }; left() { echo $(( 555 - ($(date +%s) - T0) )); }
B="python3 benchmarks/bench_roundtrip.py"
timeout 380 $B tests/data/fidelity/llama3/live.json --workdir $W/llama3 --modes forked,context,reference,reference:2 --gpus 0 \
  --limit-s forked=60,context=60,reference=125 > $OUT/llama3.txt 2> $OUT/llama3.err; echo "llama3 rc $? at $(el)" | tee -a $OUT/log.txt
L=$(left); [ $L -gt 150 ] && { timeout $(( L - 10 )) $B tests/data/roundtrip_modes/phi2/live.json --workdir $W/phi2 --modes forked,reference --gpus 0 \
  --limit-s forked=40,reference=$(( L - 60 )) > $OUT/phi2.txt 2> $OUT/phi2.err; echo "phi2 rc $? at $(el)" | tee -a $OUT/log.txt; }
tar czf $OUT/rt33.tgz -C $W --exclude='*.safetensors' --exclude='replays' --exclude='scripts' --exclude='replay.json' .
grep -v "^ *phases" $OUT/*.txt; tail -5 $OUT/*.err
