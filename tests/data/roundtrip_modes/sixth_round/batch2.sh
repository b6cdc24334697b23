# second device command (same machine as batch1.sh, at 79b6d83), as sent (one line, split here)
source .gpu/activate.sh && python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl && W=/tmp/rt36b; mkdir -p $W; unset PYTHONDONTWRITEBYTECODE; export PYTHONPYCACHEPREFIX=/tmp/rt36/pyc; T0=$(date +%s)
timeout 330 python3 benchmarks/bench_roundtrip.py tests/data/fidelity/llama3/live.json --workdir $W/llama3 --gpus 0 --modes forked_handover,forked_turn,reference --limit-s forked_handover=90,forked_turn=90,reference=140 > $OUT/llama3.txt 2> $OUT/llama3.err; echo "llama3 rc $? at $(( $(date +%s) - T0 ))" | tee $OUT/log.txt
timeout 150 python3 -m pytest -q -rA -m gpu tests/gpu/test_roundtrip.py -k handover -p no:cacheprovider > $OUT/gpu_test.txt 2>&1; echo "test rc $? at $(( $(date +%s) - T0 ))" | tee -a $OUT/log.txt
tar czf $OUT/rt36b.tgz -C $W --exclude='*.safetensors' --exclude='replays' --exclude='scripts' --exclude='replay.json' llama3; grep -v "^ *phases" $OUT/llama3.txt; tail -5 $OUT/gpu_test.txt
# printed: llama3 rc 0 at 127; test rc 0 at 162
