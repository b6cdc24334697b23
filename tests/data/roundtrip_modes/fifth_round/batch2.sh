#!/bin/bash
# #28 session 35, command 2: the default mode and the reference with a bytecode cache (as a pip install
# has; this image sets PYTHONDONTWRITEBYTECODE=1 and ships no __pycache__), on llama3, stablelm, phi-2
W=/tmp/rt35b; rm -rf $W; mkdir -p $W
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
unset PYTHONDONTWRITEBYTECODE; export PYTHONPYCACHEPREFIX=$W/pyc
{
for i in 1 2 3; do /usr/bin/time -f "bytecode-cache import run $i: %e s" python3 -c "import torch, nvfuser_direct, torch._inductor.config"; done
python3 -c "import sys, os; print('dont_write_bytecode', sys.flags.dont_write_bytecode, 'prefix', sys.pycache_prefix)"
du -sh $W/pyc
} > $OUT/bytecode.txt 2>&1; echo "bytecode done at $(el)" | tee -a $OUT/log.txt
B="python3 benchmarks/bench_roundtrip.py"
timeout 170 $B tests/data/fidelity/llama3/live.json --workdir $W/llama3 --modes forked_turn,reference --gpus 0 \
  --limit-s forked_turn=60,reference=100 > $OUT/llama3.txt 2> $OUT/llama3.err; echo "llama3 rc $? at $(el)" | tee -a $OUT/log.txt
timeout 140 $B tests/data/roundtrip_modes/stablelm/live.json --workdir $W/stablelm --modes forked_turn,reference --gpus 0 \
  --limit-s forked_turn=50,reference=85 > $OUT/stablelm.txt 2> $OUT/stablelm.err; echo "stablelm rc $? at $(el)" | tee -a $OUT/log.txt
L=$(( 545 - ($(date +%s) - T0) ))
timeout $L $B tests/data/roundtrip_modes/phi2/live.json --workdir $W/phi2 --modes forked_turn,reference --gpus 0 \
  --limit-s forked_turn=50,reference=$(( L - 60 )) > $OUT/phi2.txt 2> $OUT/phi2.err; echo "phi2 rc $? at $(el)" | tee -a $OUT/log.txt
tar czf $OUT/rt35b.tgz -C $W --exclude='*.safetensors' --exclude='replays' --exclude='scripts' --exclude='replay.json' --exclude=pyc llama3 stablelm phi2
cat $OUT/bytecode.txt; grep -v "^ *phases" $OUT/llama3.txt $OUT/stablelm.txt $OUT/phi2.txt; grep -h phases $OUT/*.txt; tail -n 3 $OUT/*.err
