"""The round trip's sixth round on the H200 (issue #28, ``tests/data/roundtrip_modes/sixth_round``):
``--prepare-ahead handover`` against the default and the reference, the default five times on
stablelm, a probe of the cold-L2 flush, and the GPU tests run at 79b6d83."""

from __future__ import annotations

import collections
import json
import re
import statistics

import pytest

from benchmarks.bench_roundtrip import base_mode, compare_modes, live_medians, process_costs

from recorded_roundtrips import DATA, check_costs, handover_gaps, recorded_modes, recorded_phases, recorded_runs

ROUND = DATA / "sixth_round"
SESSIONS = {"stablelm_first": 10, "stablelm_second": 10, "phi2": 8, "llama3": 26}
"""Each session folder's live fusion records (both stablelm folders are one session, run twice)."""
STABLELM_LIVE = DATA / "stablelm" / "live.json"


def _modes(session: str) -> dict:
    return recorded_modes(ROUND / "sessions" / session)


def _stablelm_runs(kind: str) -> list[dict]:
    """Every run of ``kind`` (``forked_turn``, ``reference``...) on stablelm, both commands, in order."""
    return [
        figures for session in ("stablelm_first", "stablelm_second") for figures in recorded_runs(_modes(session), kind)
    ]


@pytest.mark.parametrize(("session", "mode"), [(s, m) for s in SESSIONS for m in _modes(s)])
def test_each_runs_cost_per_fusion_is_recomputed_from_its_recorded_processes(session, mode):
    figures = _modes(session)[mode]
    assert not figures["stopped_at_limit"] and figures["replayed"] == figures["distinct"]
    check_costs(figures, process_costs(figures["processes"]))


@pytest.mark.parametrize(
    ("session", "expected"),
    [
        (
            "stablelm_first",
            {
                "forked_turn": (4.16, 5.39),
                "forked_handover": (3.18, 4.71),
                "reference": (5.04, 9.01),
                "forked_turn:2": (3.71, 5.65),
                "forked_handover:2": (3.33, 5.53),
                "reference:2": (5.39, 7.05),
            },
        ),
        ("phi2", {"forked_handover": (2.56, 5.30), "reference": (5.32, 6.90)}),
        ("llama3", {"forked_handover": (2.90, 5.29), "forked_turn": (2.58, 4.23), "reference": (4.87, 9.31)}),
    ],
)
def test_the_handover_modes_median_and_worst_beside_the_default_and_the_reference(session, expected):
    """Handover took 0.5 and 0.4 s off stablelm's median in one command and added 0.3 s to llama3's
    in another: the compile's own spread from run to run is larger than the hand-over it hides."""
    modes = _modes(session)
    got = {mode: (modes[mode]["median_s"], modes[mode]["worst_s"]) for mode in expected}
    for mode, pair in expected.items():
        assert got[mode] == pytest.approx(pair, abs=0.006), mode


def test_handover_moves_stablelm_nvfusion6_past_the_noise_floor_in_both_runs():
    """nvFusion6 (live 20127.5 ns) replayed 2.1 and 2.9 % faster than live in the handover runs, past
    the 2 % floor (FASTER), against 0.9 and 1.3 % in the references beside them (SAME); the second run
    also turned record 7. llama3 and phi-2 kept every verdict. What handover changes is below."""
    modes = _modes("stablelm_first")
    live = live_medians(str(STABLELM_LIVE))["6"]
    compared = compare_modes(modes, modes["reference"])
    assert compared["forked_handover"]["verdicts_vs_reference"]["differ"] == ["6"]
    assert compared["forked_handover:2"]["verdicts_vs_reference"]["differ"] == ["6", "7"]
    gaps = {mode: 1 - modes[mode]["replay_median_ns"]["6"] / live for mode in modes}
    assert gaps["forked_handover"] == pytest.approx(0.0206, abs=5e-4)
    assert gaps["forked_handover:2"] == pytest.approx(0.0294, abs=5e-4)
    assert gaps["reference"] == pytest.approx(0.0087, abs=5e-4) and gaps["reference:2"] == pytest.approx(
        0.0135, abs=5e-4
    )
    for session in ("phi2", "llama3"):
        other = _modes(session)
        verdicts = compare_modes(other, other["reference"])["forked_handover"]["verdicts_vs_reference"]
        assert verdicts == {"compared": SESSIONS[session], "differ": [], "same": True}


def _overlaps_and_context_gaps(session: str, mode: str) -> tuple[set[str], list[float]]:
    """The phases of other processes that overlapped any process's samples, and the time from each
    process's last phase to the next one's CUDA context."""
    docs = sorted(recorded_phases(ROUND / "sessions" / session, mode), key=lambda d: d["ended_at"])
    beside: set[str] = set()
    for doc in docs:
        samples = next(p for p in doc["phases"] if p["name"] == "samples")
        for other in docs:
            if other is not doc:
                beside |= {
                    p["name"]
                    for p in other["phases"]
                    if p["start"] < samples["end"] and p["end"] > samples["start"] and p["end"] > p["start"]
                }
    return beside, handover_gaps(docs)


@pytest.mark.parametrize("run", ["forked_handover", "forked_handover:2"])
def test_under_handover_a_turn_samples_alone_its_context_made_as_the_one_before_exits(run):
    """Nothing of another process ran while a turn sampled (only the next one, forked and waiting
    before any CUDA call). What differs from the default: each turn's CUDA context (and the memory
    its inputs take) was made 0 to 8 ms after the process before it wrote its capture, while that
    process was still exiting with its context and memory; in the default, 0.12 s and more after.
    Where the GPU places a process's memory may depend on what another still holds: a guess that
    would also fit nvFusion6's default-against-reference shift, not tested."""
    beside, gaps = _overlaps_and_context_gaps("stablelm_first", run)
    assert beside <= {"wait_to_prepare"}
    assert max(gaps) < 0.009
    _, default_gaps = _overlaps_and_context_gaps("stablelm_first", run.replace("handover", "turn"))
    assert min(default_gaps) > 0.12


@pytest.mark.parametrize(
    ("session", "mode"), [(s, m) for s in SESSIONS for m in _modes(s) if m.startswith("forked_turn")]
)
def test_a_default_turn_samples_alone_and_adds_about_half_a_second_to_its_compile(session, mode):
    """Only the next process, forked and waiting before any CUDA call, overlapped a turn's samples.
    Median per run: context 0.24 to 0.26 s, the hand-over (a process's last phase to the next one's
    context) 0.14 to 0.16 s, samples 0.06 s, the profiler 0.03 s. Worst within 1.3 to 2.0x the median."""
    beside, gaps = _overlaps_and_context_gaps(session, mode)
    assert beside <= {"wait_to_prepare"}
    assert 0.11 < min(gaps) and max(gaps) < 0.18 and 0.14 <= statistics.median(gaps) <= 0.165
    figures = _modes(session)[mode]
    phases = figures["phase_medians_s"]
    assert 0.235 <= phases["cuda_context"] <= 0.26
    assert phases["samples"] < 0.075 and phases["profiler_init"] < 0.045
    assert 1.28 < figures["worst_s"] / figures["median_s"] < 2.04


def test_the_default_turns_record_9_in_2_of_5_runs_where_every_reference_sits_near_the_floor():
    """Record 9 (nvFusion9, live 34560 ns; floor 2 %, 691 ns): the four references replayed it 2.04 to
    2.55 % faster than live (FASTER), one of them 13 ns past the floor; the default 1.48 to 2.50 %,
    SAME in 2 of its 5 runs. Every other record had one verdict in all nine runs but nvFusion6's
    under handover (above)."""
    live = live_medians(str(STABLELM_LIVE))
    floor = 0.02 * live["9"]
    reference, default = _stablelm_runs("reference"), _stablelm_runs("forked_turn")
    assert (len(reference), len(default)) == (4, 5)
    assert [r["verdicts"]["9"] for r in reference] == ["FASTER"] * 4
    assert [r["verdicts"]["9"] for r in default] == ["FASTER", "SAME", "SAME", "FASTER", "FASTER"]
    gaps = [live["9"] - r["replay_median_ns"]["9"] for r in reference]
    assert min(gaps) - floor == pytest.approx(13.3, abs=0.1)
    ratios = sorted(round(100 * (1 - r["replay_median_ns"]["9"] / live["9"]), 2) for r in default)
    assert ratios == [1.48, 1.9, 2.22, 2.5, 2.5]
    for record in live:
        if record in ("4", "9"):  # 4 is replayed as record 1's duplicate (no replay of its own)
            continue
        assert len({r["verdicts"][record] for r in reference + default}) == 1, record


def test_the_benchmark_now_prints_where_a_differing_record_sat_against_the_floor():
    """What ``bench_roundtrip`` prints under a mode whose verdicts differ (added after this round),
    recomputed from its figures and stablelm's live medians: record 9 straddles the floor by tenths
    of a percent, handover's record 6 lies a percent and more from the reference's."""
    from benchmarks.bench_roundtrip import margin_words

    first, second = _modes("stablelm_first"), _modes("stablelm_second")
    live = live_medians(str(STABLELM_LIVE))
    words = {
        name: margin_words(compare_modes(modes, modes["reference"], live)[mode]["verdicts_vs_reference"]["margins"])
        for name, modes, mode in (("turn", second, "forked_turn"), ("handover", first, "forked_handover"))
    }
    assert words == {
        "turn": "record 9: -2.17 % of live in the reference, -1.48 % here (floor 2.00 %)",
        "handover": "record 6: -0.87 % of live in the reference, -2.06 % here (floor 2.00 %)",
    }


def test_nvfusion6_replays_slower_in_every_default_run_than_in_every_reference():
    """The default's five medians 20224 to 20336 ns, the references' four 19856 to 19968: +1.6 % from
    the median of one to the other's (fifth round: +2.8 %, fourth +2.1 %). Still not explained."""
    default = [r["replay_median_ns"]["6"] for r in _stablelm_runs("forked_turn")]
    reference = [r["replay_median_ns"]["6"] for r in _stablelm_runs("reference")]
    assert min(default) > max(reference)
    assert (min(default), max(default), min(reference), max(reference)) == (20224.0, 20336.0, 19856.0, 19968.0)
    assert statistics.median(default) / statistics.median(reference) == pytest.approx(1.0157, abs=5e-4)


def test_the_defaults_median_on_stablelm_spreads_over_1_4_s_from_run_to_run():
    """Five runs in two commands on one machine: 2.75 to 4.16 s (fifth round, another machine: 3.06);
    median of the five 3.53 s, over the 3 s target; the references 4.49 to 5.39 s."""
    medians = sorted(round(r["median_s"], 2) for r in _stablelm_runs("forked_turn"))
    assert medians == [2.75, 3.16, 3.53, 3.71, 4.16]
    references = sorted(round(r["median_s"], 2) for r in _stablelm_runs("reference"))
    assert references == [4.49, 4.79, 5.04, 5.39]


DEFAULT_RUNS = {
    "third": (DATA / "third_round" / "spares_vs_turn" / "stablelm_turn", ("forked_turn",)),
    "fourth": (DATA / "fourth_round" / "sessions" / "stablelm", ("forked_turn",)),
    "fifth": (DATA / "fifth_round" / "sessions" / "stablelm", ("forked_turn",)),
    "sixth_first": (ROUND / "sessions" / "stablelm_first", ("forked_turn", "forked_turn:2")),
    "sixth_second": (ROUND / "sessions" / "stablelm_second", ("forked_turn", "forked_turn:2", "forked_turn:3")),
}
"""Every run of the default on stablelm since the third round, with the reference run beside it."""


def _profiler_lag_and_shifts(folder, mode: str) -> tuple[list[float], dict[str, float]]:
    """How long after its scripts (the compile) each process's profiler window had ended, and the
    run's medians of records 3 and 6 against the reference's beside it (fractions)."""
    lags = []
    for doc in recorded_phases(folder, mode):
        span = {p["name"]: p for p in doc["phases"]}
        lags.append(span["profiler_init"]["end"] - span["scripts"]["end"])
    modes = recorded_modes(folder)
    mine, reference = modes[mode]["replay_median_ns"], modes["reference"]["replay_median_ns"]
    return lags, {k: mine[k] / reference[k] - 1 for k in ("3", "6")}


def test_nvfusion3_and_6_replayed_slower_in_every_default_run_whose_profiler_was_up_before_the_compile_ended():
    """The default opened a profiler window in a thread beside its compile. In the third round that
    window still held the profiler's imports and ended 1.8 to 2.3 s after the compile: nvFusion3 and
    nvFusion6 replayed -0.5 and +0.6 % from the reference. Since the imports moved to the fork server
    (fourth round on) it ended before the compile did (at most 2 ms after, where the compile held
    the GIL), so CUPTI was up before the kernels were loaded, and both replayed 1.3 to 2.8 % slower
    than the reference in all 7 runs. After this round the default opens no window before its
    samples, as the reference does (``fusiondiff/replay/child.py``); not measured yet."""
    lags, shifts = _profiler_lag_and_shifts(DEFAULT_RUNS["third"][0], "forked_turn")
    assert min(lags) > 1.8 and shifts == pytest.approx({"3": -0.0051, "6": 0.0056}, abs=5e-4)
    later = []
    for name, (folder, modes) in DEFAULT_RUNS.items():
        for mode in modes if name != "third" else ():
            lags, shifts = _profiler_lag_and_shifts(folder, mode)
            assert max(lags) < 0.0025, (name, mode)
            later += shifts.values()
    assert len(later) == 14 and 0.0126 < min(later) and max(later) < 0.0282


def test_pooled_over_both_commands_only_nvfusion3_and_6_lie_apart_from_every_reference_run():
    """``bench_roundtrip``'s repeat summary (added after this round) over stablelm's five default
    runs and four references: every default run replayed records 3 (+2.2 %) and 6 (+1.6 %) above
    every reference run, which runs that differ in nothing do for a record 1 time in 63; no other
    record lay apart. Each command alone (3 and 2 runs, 2 and 2) also found 5 and 8 there, by margins
    of 0.2 to 0.4 %: a few runs say little about one record."""
    from benchmarks.roundtrip_repeats import repeat_summary

    pooled = {}
    for session in ("stablelm_first", "stablelm_second"):
        for mode, figures in _modes(session).items():
            base = base_mode(mode)
            if base in ("forked_turn", "reference"):
                pooled[f"{base}:{session}:{mode}"] = figures
    apart = repeat_summary(pooled)["apart"]["forked_turn"]
    assert apart["chance"] == pytest.approx(2 / 126)
    assert {k: round(100 * (r["ratio"] - 1), 2) for k, r in apart["records"].items()} == {"3": 2.15, "6": 1.57}
    assert all(r["above"] for r in apart["records"].values())
    second = repeat_summary(_modes("stablelm_second"))["apart"]["forked_turn"]["records"]
    assert sorted(second, key=int) == ["3", "5", "6", "8"]


def _l2_medians(name: str) -> dict[str, float]:
    """The probe's median per variant: the median of its 8 rounds' medians (30 samples each)."""
    by_variant = collections.defaultdict(list)
    for line in (ROUND / "l2_probe" / f"l2_{name}.jsonl").read_text().splitlines():
        row = json.loads(line)
        assert row["kernels"] == 30  # one kernel per sample: these three fusions have one kernel each
        by_variant[row["variant"]].append(row["median_ns"])
    assert all(len(v) == 8 for v in by_variant.values())
    return {variant: statistics.median(values) for variant, values in by_variant.items()}


@pytest.mark.parametrize(("name", "clean_saves"), [("stablelm_6", 0.178), ("stablelm_3", 0.148), ("llama3_3", 0.066)])
def test_the_flush_leaves_dirty_lines_whose_write_back_the_sampled_kernel_pays(name, clean_saves):
    """fusiondiff's cold sample zeroes a buffer of twice the L2, synchronizes and launches. Waiting
    20 or 200 us on the host before the launch changed nothing (within 0.4 %, 40 ns): the L2 does not write
    its dirty lines back while idle, so a sooner launch (the default's shorter host path) is not why
    nvFusion6 is slower there. Reading a second buffer after the zeroing (L2 left holding clean lines)
    made the same kernels 6.6 to 17.8 % faster: every cold sample includes writing back up to a full
    L2 of the flush's lines, on both sides of a diff alike."""
    medians = _l2_medians(name)
    for spin in ("sync_spin20", "sync_spin200"):
        assert abs(medians[spin] / medians["sync"] - 1) < 0.004, spin
    assert 1 - medians["clean"] / medians["sync"] == pytest.approx(clean_saves, abs=5e-4)


def test_the_probes_first_attempt_matched_no_kernel_by_its_name_prefix():
    """Kineto's names for nvFuser's kernels did not start with ``nvfuser`` here (the kept probe
    matches the word anywhere): the first attempt's rows have no kernel."""
    rows = [json.loads(line) for line in (ROUND / "l2_probe" / "first_attempt" / "l2_stablelm_6.jsonl").open()]
    assert rows and all(r["kernels"] == 0 and r["median_ns"] is None for r in rows)


def _summary(name: str) -> str:
    text = (ROUND / "gpu_tests" / name).read_text()
    return next(line for line in reversed(text.splitlines()) if re.search(r"\d+ (passed|failed)", line))


def test_the_gpu_tests_run_this_round():
    assert _summary("handover.txt").startswith("1 passed, 5 deselected")
    assert _summary("roundtrip_replay_timers.txt").startswith("18 passed")
    assert _summary("end_to_end_before_fix_2.txt").startswith("2 failed, 7 passed")
    assert _summary("end_to_end_after_fix.txt").startswith("9 passed")


def test_before_the_fix_the_end_to_end_tests_met_the_test_process_on_the_gpu_not_a_leftover():
    """The replay named one more process on its GPU: pytest's own (it had rebuilt inputs on the GPU),
    the demo's B two (pytest and the demo's parent). A benchmark run left no process behind:
    nvidia-smi listed no compute process before it, right after it or 5 s later."""
    failed = (ROUND / "gpu_tests" / "end_to_end_before_fix_2.txt").read_text()
    assert "assert ['host_bound', 'other_processes'] in ([], ['host_bound'])" in failed
    assert "other processes with a context on the GPU: 1 in A, 2 in B" in failed
    for name in ("before.txt", "after.txt"):
        lines = (ROUND / "gpu_tests" / name).read_text().splitlines()
        assert lines and all(line.startswith(("pid, used_gpu_memory", "after +")) for line in lines), lines
