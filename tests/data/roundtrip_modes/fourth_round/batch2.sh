#!/bin/bash
# #28 session 34, command 2: with the profiler's imports in the server: llama3 forked_turn/floor/reference, stablelm forked_turn/reference
W=/tmp/rt34b; rm -rf $W; mkdir -p $W
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
B="python3 benchmarks/bench_roundtrip.py"
timeout 290 $B tests/data/fidelity/llama3/live.json --workdir $W/llama3 --modes forked_turn,floor,reference --gpus 0 \
  --limit-s forked_turn=80,floor=40,reference=150 > $OUT/llama3.txt 2> $OUT/llama3.err; echo "llama3 rc $? at $(el)" | tee -a $OUT/log.txt
L=$(( 540 - ($(date +%s) - T0) ))
timeout $(( L - 5 )) $B tests/data/roundtrip_modes/stablelm/live.json --workdir $W/stablelm --modes forked_turn,reference --gpus 0 \
  --limit-s forked_turn=50,reference=$(( L - 75 )) > $OUT/stablelm.txt 2> $OUT/stablelm.err; echo "stablelm rc $? at $(el)" | tee -a $OUT/log.txt
tar czf $OUT/rt34b.tgz -C $W --exclude='*.safetensors' --exclude='replays' --exclude='scripts' --exclude='replay.json' .
grep -v "^ *phases" $OUT/llama3.txt $OUT/stablelm.txt; grep phases $OUT/llama3.txt $OUT/stablelm.txt; tail -3 $OUT/*.err; grep -h "fork server" $W/*/forked_turn/logs/*server* 2>/dev/null | head -3
