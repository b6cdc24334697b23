#!/bin/bash
# #28 session 32, command 1: import profile, profiler/compile overlap, exit cost; the GPU tests but the round trip's
W=/tmp/g1; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,utilization.gpu --format=csv > $W/smi.txt
python3 -X importtime -c "import torch, nvfuser_direct" 2> $W/importtime.txt
python3 -X importtime -c "import fusiondiff.replay.child" 2> $W/importtime_child.txt
for i in 1 2 3; do for m in seq thread; do for e in normal _exit; do
  s=$(date +%s.%N); python3 .probe/p28.py $m $e > $W/p28_${m}_${e}_$i.txt 2>&1; x=$(date +%s.%N)
  echo "$m $e $i exited $x started $s" >> $W/p28_exits.txt
done; done; done
timeout 420 python3 -m pytest -m gpu tests/gpu --ignore tests/gpu/test_roundtrip.py -q -rs --durations=20 -p no:cacheprovider > $W/gpu_tests.txt 2>&1; echo "pytest rc $?" >> $W/gpu_tests.txt
tar czf $OUT/g1.tgz -C $W .
tail -5 $W/gpu_tests.txt; cat $W/p28_exits.txt | head -3; grep -h P28 $W/p28_* | head -4
