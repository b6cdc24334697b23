# sixth device command (same machine, at 79b6d83): stablelm again (sessions/stablelm_second), then the end-to-end tests
source .gpu/activate.sh && python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl 2>/dev/null; unset PYTHONDONTWRITEBYTECODE; export PYTHONPYCACHEPREFIX=/tmp/rt36/pyc; W=/tmp/rt36c; T0=$(date +%s)
timeout 300 python3 benchmarks/bench_roundtrip.py tests/data/roundtrip_modes/stablelm/live.json --workdir $W/stablelm --gpus 0 --modes reference,forked_turn,forked_turn:2,reference:2,forked_turn:3 --limit-s forked_turn=45,reference=70 > $OUT/stablelm2.txt 2> $OUT/stablelm2.err; echo "stablelm rc $? at $(( $(date +%s) - T0 ))" | tee $OUT/log.txt
tar czf $OUT/rt36c.tgz -C $W --exclude='*.safetensors' --exclude='replays' --exclude='scripts' --exclude='replay.json' stablelm
L=$(( 480 - ($(date +%s) - T0) )); timeout $L python3 -m pytest -q -rA -m gpu tests/gpu/test_end_to_end.py -p no:cacheprovider -x > $OUT/gpu_e2e.txt 2>&1; echo "e2e rc $? at $(( $(date +%s) - T0 ))" | tee -a $OUT/log.txt
# printed: stablelm rc 1 at 183 (the benchmark exits 1 when a mode's verdicts differ); e2e rc 1 at 213
