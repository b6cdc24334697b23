#!/bin/bash
# Issue #26's checks on the H200, as a user runs them. Usage: bash repro/blocks/verify.sh WORKDIR
W=${1:-/tmp/blk}; rm -rf "$W"; mkdir -p "$W"/seed "$W"/contention "$W"/step
F="python3 -m fusiondiff"
S="python3 repro/blocks/summarize.py"
run() { echo "+ $*"; "$@"; echo "  -> exit $?"; }
T0=$(date +%s)
echo "== seed RMSNorm, activation at storage offset 1, live vs nvFuser's repro"
run $F capture repro/blocks/rmsnorm_session.py --offset 1 --save-inputs --sm-timeline -o "$W"/seed/live.json
if ! $S "$W"/seed/live.json | grep -q "CTAs,"; then
  $S "$W"/seed/live.json; echo "the seed capture recorded no timeline: stopping here"; exit 1
fi
run python3 -c "from fusiondiff.io.store import load_capture; open('$W/seed/nvfuser_repro.py','w').write(load_capture('$W/seed/live.json').fusions[0].repro_script)"
run $F replay "$W"/seed/nvfuser_repro.py --sm-timeline -o "$W"/seed/replay_nvfuser.json
run $F repro "$W"/seed/live.json -o "$W"/seed/ours.py
run $F replay "$W"/seed/ours.py --inputs "$W"/seed/live.json --sm-timeline -o "$W"/seed/replay_inputs.json
run $S "$W"/seed/live.json "$W"/seed/replay_nvfuser.json "$W"/seed/replay_inputs.json
run $F diff "$W"/seed/live.json "$W"/seed/replay_nvfuser.json
run $F diff "$W"/seed/live.json "$W"/seed/replay_inputs.json
echo "seed done at $(( $(date +%s) - T0 )) s"
echo "== contention: a second stream runs bf16 matmuls while the fusion runs"
run $F capture repro/blocks/rmsnorm_session.py --matmuls --save-inputs --sm-timeline -o "$W"/contention/live.json
run $F repro "$W"/contention/live.json -o "$W"/contention/ours.py
run $F replay "$W"/contention/ours.py --inputs "$W"/contention/live.json --sm-timeline -o "$W"/contention/replay.json
run $S "$W"/contention/live.json "$W"/contention/replay.json
run $F diff "$W"/contention/live.json "$W"/contention/replay.json
echo "contention done at $(( $(date +%s) - T0 )) s"
echo "== a training step (litgpt Llama-3-8B config, 1 layer, block 512, batch 2), round trip"
run $F capture repro/fidelity/train_step.py --sm-timeline --cuda-source -o "$W"/step/live.json -- --model Llama-3-8B --layers 1 --block 512 --batch 2 --steps 1
run $S "$W"/step/live.json
run $F roundtrip "$W"/step/live.json -o "$W"/step/rt --sm-timeline --batch 4 --top 10
run $S "$W"/step/rt/replay.json
echo "step done at $(( $(date +%s) - T0 )) s"
