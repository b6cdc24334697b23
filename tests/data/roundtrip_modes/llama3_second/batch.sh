#!/bin/bash
# #28 batch 2: the context mode on llama3 (reference, floor from batch 1), then phi-2 and stablelm (models in no fixture)
W=/tmp/rt28b; rm -rf $W; mkdir -p $W/llama3 $W/phi2 $W/stablelm
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }; left() { echo $(( 520 - ($(date +%s) - T0) )); }
cp -r .probe/prev/llama3/* $W/llama3/
B="python3 benchmarks/bench_roundtrip.py"
timeout 90 $B tests/data/fidelity/llama3/live.json --workdir $W/llama3 --modes context --gpus 0 --limit-s 70 > $W/llama3.txt 2> $W/llama3.err
echo "llama3 context rc $? at $(el)" | tee -a $W/log.txt
for M in phi2:phi-2 stablelm:stablelm-3b-4e1t; do
  D=${M%%:*}; NAME=${M#*:}
  [ $(left) -lt 150 ] && { echo "no time for $D at $(el)" | tee -a $W/log.txt; break; }
  timeout 130 python3 -m fusiondiff capture repro/fidelity/train_step.py -o $W/$D/live.json -- --model $NAME --layers 1 --block 512 --batch 2 --steps 2 > $W/$D/capture.log 2>&1
  echo "$D capture rc $? at $(el)" | tee -a $W/log.txt
  L=$(left); REF=$(( L - 75 )); [ $REF -gt 170 ] && REF=170
  timeout $(( L - 5 )) $B $W/$D/live.json --workdir $W/$D --modes context,reference --gpus 0 --limit-s context=60,reference=$REF > $W/$D.txt 2> $W/$D.err
  echo "$D modes rc $? at $(el) (reference limit $REF)" | tee -a $W/log.txt
done
tar czf $OUT/rt28b.tgz -C $W --exclude='*.safetensors' .
cat $W/*.txt; tail -2 $W/*/capture.log
