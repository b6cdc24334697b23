#!/bin/bash
# #28 session 33, command 2: idle contexts probe; forked_turn beside the reference on llama3 and stablelm
W=/tmp/rt33b; rm -rf $W; mkdir -p $W/p
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
timeout 190 python3 .probe/ctx_probe.py $W/p $OUT "#3" 3 > /dev/null 2> $OUT/ctx_probe.err; echo "probe rc $? at $(el)" | tee -a $OUT/log.txt
B="python3 benchmarks/bench_roundtrip.py"
timeout 175 $B tests/data/fidelity/llama3/live.json --workdir $W/llama3 --modes forked_turn,reference --gpus 0 \
  --limit-s forked_turn=65,reference=100 > $OUT/llama3.txt 2> $OUT/llama3.err; echo "llama3 rc $? at $(el)" | tee -a $OUT/log.txt
L=$(( 545 - ($(date +%s) - T0) ))
timeout $(( L - 5 )) $B tests/data/roundtrip_modes/stablelm/live.json --workdir $W/stablelm --modes forked_turn,reference --gpus 0 \
  --limit-s forked_turn=45,reference=$(( L - 60 )) > $OUT/stablelm.txt 2> $OUT/stablelm.err; echo "stablelm rc $? at $(el)" | tee -a $OUT/log.txt
tar czf $OUT/rt33b.tgz -C $W --exclude='*.safetensors' --exclude='replays' --exclude='scripts' --exclude='replay.json' --exclude=p .
cat $OUT/ctx_probe.txt; grep -v "^ *phases" $OUT/llama3.txt $OUT/stablelm.txt; tail -3 $OUT/*.err
