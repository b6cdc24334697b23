#!/bin/bash
# #28 session 34, command 3: phi-2 forked_turn beside the reference; GPU round-trip and replay tests
W=/tmp/rt34c; rm -rf $W; mkdir -p $W
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
B="python3 benchmarks/bench_roundtrip.py"
timeout 200 $B tests/data/roundtrip_modes/phi2/live.json --workdir $W/phi2 --modes forked_turn,reference --gpus 0 \
  --limit-s forked_turn=50,reference=125 > $OUT/phi2.txt 2> $OUT/phi2.err; echo "phi2 rc $? at $(el)" | tee -a $OUT/log.txt
tar czf $OUT/rt34c.tgz -C $W --exclude='*.safetensors' --exclude='replays' --exclude='scripts' --exclude='replay.json' .
P="python3 -m pytest -q -rA --tb=short -p no:cacheprovider --durations=10"
L=$(( 560 - ($(date +%s) - T0) ))
timeout $L $P -m gpu tests/gpu/test_roundtrip.py tests/gpu/test_replay.py tests/gpu/test_timers.py > $OUT/gpu_tests.txt 2>&1; echo "rc $? at $(el)" >> $OUT/gpu_tests.txt
grep -v "^ *phases" $OUT/phi2.txt; grep phases $OUT/phi2.txt; tail -30 $OUT/gpu_tests.txt
