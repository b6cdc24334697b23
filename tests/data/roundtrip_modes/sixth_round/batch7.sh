# eighth device command (a fresh machine), with tests/gpu/test_end_to_end.py as fixed in the working tree (committed next)
source .gpu/activate.sh && python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl 2>/dev/null; git log --oneline -1; git status --short | head -3
timeout 240 python3 -m pytest -q -rA -m gpu tests/gpu/test_end_to_end.py -p no:cacheprovider > $OUT/gpu_e2e3.txt 2>&1; echo rc $?
# printed: rc 0 (gpu_tests/end_to_end_after_fix.txt: 9 passed in 147.04s)
