# fifth device command (same machine, at 79b6d83)
source .gpu/activate.sh && python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl 2>/dev/null; unset PYTHONDONTWRITEBYTECODE; export PYTHONPYCACHEPREFIX=/tmp/rt36/pyc; git log --oneline -1
timeout 520 python3 -m pytest -q -rA -m gpu tests/gpu/test_roundtrip.py tests/gpu/test_replay.py tests/gpu/test_timers.py -p no:cacheprovider --durations=8 > $OUT/gpu_tests.txt 2>&1; echo rc $?
# printed: rc 0 (gpu_tests/roundtrip_replay_timers.txt: 18 passed in 305.20s)
