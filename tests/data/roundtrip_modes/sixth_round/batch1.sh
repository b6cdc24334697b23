#!/bin/bash
# #28 next batch (prepared in session 35 at 575e20e, not run): --prepare-ahead handover against the default
# and the reference, with a bytecode cache; stablelm twice (is nvFusion6's +2-3 % the mode's?); the GPU test.
W=/tmp/rt36; rm -rf $W; mkdir -p $W
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
unset PYTHONDONTWRITEBYTECODE; export PYTHONPYCACHEPREFIX=$W/pyc
python3 -c "import torch, nvfuser_direct, torch._inductor.config"; echo "bytecode written at $(el)" | tee -a $OUT/log.txt
B="python3 benchmarks/bench_roundtrip.py"
timeout 280 $B tests/data/roundtrip_modes/stablelm/live.json --workdir $W/stablelm --gpus 0 \
  --modes forked_turn,forked_handover,reference,forked_turn:2,forked_handover:2,reference:2 \
  --limit-s forked_turn=45,forked_handover=45,reference=70 > $OUT/stablelm.txt 2> $OUT/stablelm.err; echo "stablelm rc $? at $(el)" | tee -a $OUT/log.txt
L=$(( 560 - ($(date +%s) - T0) ))
timeout $L $B tests/data/roundtrip_modes/phi2/live.json --workdir $W/phi2 --gpus 0 --modes forked_handover,reference \
  --limit-s forked_handover=45,reference=$(( L - 60 )) > $OUT/phi2.txt 2> $OUT/phi2.err; echo "phi2 rc $? at $(el)" | tee -a $OUT/log.txt
tar czf $OUT/rt36.tgz -C $W --exclude='*.safetensors' --exclude='replays' --exclude='scripts' --exclude='replay.json' --exclude=pyc stablelm phi2
grep -v "^ *phases" $OUT/stablelm.txt $OUT/phi2.txt; tail -n 2 $OUT/*.err
# then, in a second command: llama3 forked_handover,reference (~120 s), and
#   python3 -m pytest -q -rA -m gpu tests/gpu/test_roundtrip.py -k handover
#   bash .probe/g36c.sh   (the cold-L2 probe, ~6 min)
