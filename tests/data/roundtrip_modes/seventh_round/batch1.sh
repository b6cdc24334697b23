#!/bin/bash
# #28 next batch (prepared in session 36, not run; ~520 s): the default with no profiler window before its
# samples (e20ab64) against the reference, alternated, with a bytecode cache; does nvFusion3/6's
# +1.3-2.8 % go? (tests/test_roundtrip_sixth_round_recorded.py has every earlier run)
W=/tmp/rt37; rm -rf $W; mkdir -p $W
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
unset PYTHONDONTWRITEBYTECODE; export PYTHONPYCACHEPREFIX=$W/pyc
python3 -c "import torch, nvfuser_direct, torch._inductor.config"; echo "bytecode written at $(el)" | tee -a $OUT/log.txt
B="python3 benchmarks/bench_roundtrip.py"
timeout 240 $B tests/data/roundtrip_modes/stablelm/live.json --workdir $W/stablelm --gpus 0 \
  --modes forked_turn,reference,forked_turn:2,reference:2,forked_turn:3 \
  --limit-s forked_turn=45,reference=70 > $OUT/stablelm.txt 2> $OUT/stablelm.err; echo "stablelm rc $? at $(el)" | tee -a $OUT/log.txt
timeout 130 $B tests/data/fidelity/llama3/live.json --workdir $W/llama3 --gpus 0 --modes forked_turn,reference \
  --limit-s forked_turn=50,reference=75 > $OUT/llama3.txt 2> $OUT/llama3.err; echo "llama3 rc $? at $(el)" | tee -a $OUT/log.txt
timeout 80 $B tests/data/roundtrip_modes/phi2/live.json --workdir $W/phi2 --gpus 0 --modes forked_turn,reference \
  --limit-s forked_turn=30,reference=48 > $OUT/phi2.txt 2> $OUT/phi2.err; echo "phi2 rc $? at $(el)" | tee -a $OUT/log.txt
timeout 60 python3 -m pytest -q -rA -m gpu tests/gpu/test_roundtrip.py -k "gated_at_their_imports" -p no:cacheprovider > $OUT/gpu_test.txt 2>&1; echo "test rc $? at $(el)" | tee -a $OUT/log.txt
tar czf $OUT/rt37.tgz -C $W --exclude='*.safetensors' --exclude='replays' --exclude='scripts' --exclude='replay.json' --exclude=pyc stablelm llama3 phi2
grep -v "^ *phases" $OUT/stablelm.txt $OUT/llama3.txt $OUT/phi2.txt; tail -n 3 $OUT/gpu_test.txt
# then, in a second command: bash .probe/placement/run.sh (~3 min) and bash .probe/compile_where/run.sh (~2 min)
