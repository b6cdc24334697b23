#!/bin/bash
# #28 session 33, command 3: phi-2 forked_turn beside the reference; the GPU tests never passed yet
W=/tmp/rt33c; rm -rf $W; mkdir -p $W
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
B="python3 benchmarks/bench_roundtrip.py"
timeout 165 $B tests/data/roundtrip_modes/phi2/live.json --workdir $W/phi2 --modes forked_turn,reference --gpus 0 \
  --limit-s forked_turn=40,reference=115 > $OUT/phi2.txt 2> $OUT/phi2.err; echo "phi2 rc $? at $(el)" | tee -a $OUT/log.txt
tar czf $OUT/rt33c.tgz -C $W --exclude='*.safetensors' --exclude='replays' --exclude='scripts' --exclude='replay.json' .
P="python3 -m pytest -q -rA --tb=short -p no:cacheprovider --durations=10"
L=$(( 400 - ($(date +%s) - T0) ))
timeout $L $P -m gpu "tests/gpu/test_roundtrip.py::test_forked_processes_gated_at_their_imports_use_the_gpu_only_in_their_own_turn" \
  "tests/gpu/test_roundtrip.py::test_every_distinct_fusion_is_replayed_in_its_own_process_prepared_ahead_never_beside_samples[3-context-True]" \
  "tests/gpu/test_end_to_end.py::test_repro_with_exact_inputs_runs_without_fusiondiff_and_replays_like_live" \
  "tests/gpu/test_environment.py::test_a_quiet_session_records_its_host_times_and_no_other_work" > $OUT/gpu_tests.txt 2>&1; echo "rc $? at $(el)" >> $OUT/gpu_tests.txt
grep -v "^ *phases" $OUT/phi2.txt; tail -25 $OUT/gpu_tests.txt
