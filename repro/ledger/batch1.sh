#!/usr/bin/env bash
# Issue #39's captures on the lent GPU (run from the repository root after `source .gpu/activate.sh`):
#   bash repro/ledger/batch1.sh OUT      (a) and (c), the copy bandwidth
#   bash repro/ledger/batch2.sh OUT      (b) and the zoo
set -u
fusiondiff() { python3 -m fusiondiff "$@"; }
out=${1:?OUT}
mkdir -p "$out/offset" "$out/seed_h100"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv | tee "$out/gpu.txt"
python3 repro/ledger/copy_bandwidth.py 2>&1 | tee -a "$out/gpu.txt"

# (a) a LayerNorm at storage offset 1 under thunderfx, against nvFuser's repro and fusiondiff's
cd "$out/offset" || exit 1
root=$OLDPWD
# LN_ARGS: the LayerNorm's shape, e.g. "--rows 4096 --hidden 4096" (default 1024 x 2048)
time fusiondiff capture "$root/repro/ledger/layernorm_offset.py" -o live.json --save-inputs -- ${LN_ARGS:-} 2>&1 | tail -5
python3 - <<'PY'
from fusiondiff.io.store import load_capture
live = load_capture("live.json")
print([f.name for f in live.fusions])
open("nvfuser_repro.py", "w").write(live.fusions[0].repro_script)
PY
fusiondiff replay nvfuser_repro.py -o replay_nvfuser.json 2>&1 | tail -3
fusiondiff repro live.json -o fusiondiff_repro.py --fusion '#0' 2>&1 | tail -3
fusiondiff replay fusiondiff_repro.py -o replay_fusiondiff.json 2>&1 | tail -3
for b in replay_nvfuser replay_fusiondiff; do
  fusiondiff diff live.json $b.json > diff_$b.txt 2>&1; echo "diff $b: exit $?"
done
fusiondiff diff live.json replay_fusiondiff.json --gate host > diff_replay_fusiondiff_gate_host.txt 2>&1
echo "diff replay_fusiondiff --gate host: exit $?"
fusiondiff show live.json > show_live.txt 2>&1
cd "$root" || exit 1

# (c) the seed model's forward on this GPU, against the bundled H200 capture (SKIP_SEED=1: not run)
[ "${SKIP_SEED:-0}" = 1 ] && exit 0
time python3 repro/ledger/seed_forward.py "$out/seed_h100/live_forward.json" 2>&1 | tail -3
fusiondiff diff "${SEED_A:-tests/data/seed/live_forward.json}" "$out/seed_h100/live_forward.json" > "$out/seed_h100/diff.txt" 2>&1
echo "diff seed ${SEED_A:-tests/data/seed/live_forward.json} vs this GPU: exit $?"
fusiondiff show "$out/seed_h100/live_forward.json" > "$out/seed_h100/show.txt" 2>&1
