#!/usr/bin/env bash
# One batch of the GPU suite (tests/gpu/batches.py), on the lent GPU machine:
#   source .gpu/activate.sh && bash tests/gpu/run_batch.sh BATCH [OUT]
# Writes OUT/BATCH.log (pytest's whole output, -v, every test's duration) and OUT/BATCH.xml (JUnit),
# prints one line per test and the counts. pytest is stopped at the batch's time limit (SIGINT, so
# the log and the XML of what ran are still written). Exit: pytest's status, 124 at the limit.
set -u
cd "$(dirname "$0")/../.."
batch=${1:?usage: run_batch.sh BATCH [OUT]}
out=${2:-${OUT:-gpu-out}}
mkdir -p "$out"
mapfile -t files < <(python3 tests/gpu/batches.py "$batch") || exit 2
[ "${#files[@]}" -gt 0 ] || exit 2
limit=$(python3 -c 'import sys; sys.path.insert(0, "tests/gpu"); import batches; print(batches.LIMIT_S)')
started=$SECONDS
timeout --signal=INT --kill-after=30 "$limit" python3 -m pytest -m gpu -p no:cacheprovider -v -rA \
  --durations=0 --junitxml="$out/$batch.xml" "${files[@]}" >"$out/$batch.log" 2>&1
rc=$?
echo "batch $batch: pytest exit $rc after $((SECONDS - started)) s (limit $limit s); log $out/$batch.log"
if [ -f "$out/$batch.xml" ]; then
  python3 tests/gpu/summarize.py "$out/$batch.xml"
else
  tail -n 20 "$out/$batch.log"
fi
exit "$rc"
