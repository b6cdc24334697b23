#!/bin/bash
# batch 1: new-user programs for #26 (block timelines, round trip) and #27 (another process busy, control)
W=/tmp/b1; rm -rf $W; mkdir -p $W/olmo $W/busy $W/clean
F="python3 -m fusiondiff"
run() { echo "+ $*"; "$@"; echo "  -> exit $?"; }
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
echo "== B. another process (elementwise sin loop) busy while an op-mix thunderfx session is captured"
python3 .probe/busy_elementwise.py 60 $W/busy/ready > $W/busy/busy.log 2>&1 &
BUSY=$!
for _ in $(seq 120); do [ -f $W/busy/ready ] && break; sleep 0.5; done
run $F capture .probe/opmix_session.py -o $W/busy/live.json
kill $BUSY; wait $BUSY 2>/dev/null; cat $W/busy/busy.log
python3 -c "from fusiondiff.store import load_capture; c=load_capture('$W/busy/live.json'); [open('$W/busy/nvfuser_repro%d.py'%i,'w').write(f.repro_script) for i,f in enumerate(c.fusions)]; print(len(c.fusions),'fusions')"
run $F replay $W/busy/nvfuser_repro0.py -o $W/busy/replay.json
run $F diff $W/busy/live.json $W/busy/replay.json --json $W/busy/diff.json
echo "B done at $(( $(date +%s) - T0 )) s"
echo "== A. OLMo-2 (1 layer) training step, block timelines live and round trip"
run $F capture repro/fidelity/train_step.py -o $W/olmo/live.json --sm-timeline -- --model OLMo-2-1124-7B --layers 1 --block 512 --batch 2 --steps 2
echo "A capture at $(( $(date +%s) - T0 )) s"
run $F roundtrip $W/olmo/live.json -o $W/olmo/rt --sm-timeline --batch 4
run python3 repro/blocks/summarize.py $W/olmo/live.json
run $F report $W/olmo/live.json $W/olmo/rt/replay.json -o $W/olmo/report.html
run $F report $W/olmo/live.json $W/olmo/rt/replay.json -o $W/olmo/trace.perfetto.json --format perfetto
echo "A done at $(( $(date +%s) - T0 )) s"
echo "== C. the same session alone (control), fusiondiff repro replayed"
run $F capture .probe/opmix_session.py -o $W/clean/live.json
run $F repro $W/clean/live.json -o $W/clean/ours.py
run $F replay $W/clean/ours.py -o $W/clean/replay.json
run $F diff $W/clean/live.json $W/clean/replay.json --json $W/clean/diff.json
echo "C done at $(( $(date +%s) - T0 )) s"
