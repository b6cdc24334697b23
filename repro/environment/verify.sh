#!/bin/bash
# Issue #27's four scenarios on the H200, as a user runs them. Usage: bash repro/environment/verify.sh WORKDIR
# Each scenario: `fusiondiff capture` of a session not in the repo's fixtures, a replay of a repro of
# it in a fresh process (nvFuser's own, or `fusiondiff repro`, or a whole `fusiondiff roundtrip`),
# then `fusiondiff diff`; every command's exit code is printed after it.
W=${1:-/tmp/env}; rm -rf "$W"; mkdir -p "$W"/stream "$W"/process "$W"/host "$W"/clean
F="python3 -m fusiondiff"
S=repro/environment
run() { echo "+ $*"; "$@"; echo "  -> exit $?"; }
nvfuser_repro() { python3 -c "from fusiondiff.io.store import load_capture; open('$2','w').write(load_capture('$1').fusions[0].repro_script)"; }
T0=$(date +%s)
echo "== the machine"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,clocks_event_reasons.active --format=csv
python3 -c "import pynvml; print('nvidia-ml-py', getattr(pynvml, '__version__', '?'))"

echo "== 1. other work in the same process: a thread keeps a second stream busy with bf16 matmuls"
run $F capture $S/layernorm_session.py -o "$W"/stream/live.json -- --busy-stream
run nvfuser_repro "$W"/stream/live.json "$W"/stream/nvfuser_repro.py
run $F replay "$W"/stream/nvfuser_repro.py -o "$W"/stream/replay.json
run $F diff "$W"/stream/live.json "$W"/stream/replay.json --json "$W"/stream/diff.json
echo "stream done at $(( $(date +%s) - T0 )) s"

echo "== 2. another process keeps the GPU busy while the session is captured"
python3 $S/busy_gpu.py --seconds 120 --ready "$W"/process/busy.ready > "$W"/process/busy.log 2>&1 &
BUSY=$!
for _ in $(seq 120); do [ -f "$W"/process/busy.ready ] && break; sleep 0.5; done
echo "busy process $BUSY: $(cat "$W"/process/busy.ready 2>/dev/null || echo 'not ready')"
run $F capture $S/layernorm_session.py -o "$W"/process/live.json
kill "$BUSY"; wait "$BUSY" 2>/dev/null
run nvfuser_repro "$W"/process/live.json "$W"/process/nvfuser_repro.py
run $F replay "$W"/process/nvfuser_repro.py -o "$W"/process/replay.json
run $F diff "$W"/process/live.json "$W"/process/replay.json --json "$W"/process/diff.json
echo "process done at $(( $(date +%s) - T0 )) s"

echo "== 3. a host-bound step: one-token decode steps of a 2-layer litgpt model, round trip"
run $F capture $S/decode_step.py -o "$W"/host/live.json -- --layers 2 --steps 6
run $F roundtrip "$W"/host/live.json -o "$W"/host/rt --batch 8
run $F diff "$W"/host/live.json "$W"/host/rt/replay.json
echo "host done at $(( $(date +%s) - T0 )) s"

echo "== 4. the clean control: the same LayerNorm session alone, its faithful repro replayed"
run $F capture $S/layernorm_session.py -o "$W"/clean/live.json
run $F repro "$W"/clean/live.json -o "$W"/clean/ours.py
run $F replay "$W"/clean/ours.py -o "$W"/clean/replay.json
run $F diff "$W"/clean/live.json "$W"/clean/replay.json --json "$W"/clean/diff.json
echo "clean done at $(( $(date +%s) - T0 )) s"
