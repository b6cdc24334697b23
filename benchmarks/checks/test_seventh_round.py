"""The round trip's seventh round on the H200 (issue #28, ``tests/data/roundtrip_modes/seventh_round``):
the default with no profiler window before its samples (e20ab64) against the reference, alternated;
a probe of where the inputs sit in GPU memory; where a multi-second compile goes; the GPU tests."""

from __future__ import annotations

import collections
import json
import re
import statistics
from pathlib import Path

import pytest

from benchmarks.bench_roundtrip import compare_modes, live_medians, process_costs

from recorded_roundtrips import DATA, check_costs, recorded_modes, recorded_runs

ROUND = DATA / "seventh_round"
SIXTH = DATA / "sixth_round"
MODES = {"stablelm": ("forked_turn", "reference", "forked_turn:2", "reference:2", "forked_turn:3"), "llama3": ()}


def _modes(session: str, round_: Path = ROUND) -> dict:
    return recorded_modes(round_ / "sessions" / session)


@pytest.mark.parametrize(("session", "mode"), [(s, m) for s in ("stablelm", "llama3") for m in _modes(s)])
def test_each_runs_cost_per_fusion_is_recomputed_from_its_recorded_processes(session, mode):
    figures = _modes(session)[mode]
    assert not figures["stopped_at_limit"] and figures["replayed"] == figures["distinct"]
    check_costs(figures, process_costs(figures["processes"]))


def test_stablelm_ran_default_and_reference_alternated():
    assert tuple(_modes("stablelm")) == MODES["stablelm"]


@pytest.mark.parametrize(
    ("session", "expected"),
    [
        (
            "stablelm",
            {
                "forked_turn": (3.18, 4.76),
                "reference": (4.64, 7.95),
                "forked_turn:2": (2.86, 4.85),
                "reference:2": (5.04, 8.10),
                "forked_turn:3": (3.75, 5.80),
            },
        ),
        ("llama3", {"forked_turn": (2.82, 5.18), "reference": (5.04, 9.06)}),
    ],
)
def test_the_defaults_median_and_worst_beside_the_reference(session, expected):
    modes = _modes(session)
    for mode, pair in expected.items():
        assert (modes[mode]["median_s"], modes[mode]["worst_s"]) == pytest.approx(pair, abs=0.006), mode
        assert modes[mode]["worst_s"] <= 3 * modes[mode]["median_s"]


def test_stablelms_default_median_over_eight_runs_of_two_rounds_is_above_three_seconds():
    """The target of 3 s is met by 2 of the 8 default runs on stablelm (2.75 and 2.86 s); their
    median is 3.36 s."""
    medians = [f["median_s"] for f in recorded_runs(_modes("stablelm"), "forked_turn")]
    medians += [
        f["median_s"]
        for s in ("stablelm_first", "stablelm_second")
        for f in recorded_runs(_modes(s, SIXTH), "forked_turn")
    ]
    assert len(medians) == 8
    assert sum(m <= 3.0 for m in medians) == 2
    assert statistics.median(medians) == pytest.approx(3.355, abs=0.01)


def _ratios(modes: dict, record: str) -> list[float]:
    """Each default run's replay median of ``record`` over the first reference's in its command."""
    reference = modes["reference"]["replay_median_ns"][record]
    return [f["replay_median_ns"][record] / reference for f in recorded_runs(modes, "forked_turn")]


def test_nvfusion3_and_6_no_longer_replay_slower_in_the_default():
    """Sixth round (the profiler started beside the compile): every default run replayed records 3
    and 6 1.3 to 2.8 % slower than the reference beside it. Seventh (the profiler with the samples):
    0.0 to 0.8 %, and the default's medians fall among the references'."""
    sixth = [
        r for s in ("stablelm_first", "stablelm_second") for rec in ("3", "6") for r in _ratios(_modes(s, SIXTH), rec)
    ]
    seventh = {rec: _ratios(_modes("stablelm"), rec) for rec in ("3", "6")}
    assert len(sixth) == 10 and min(sixth) > 1.012
    assert all(1.0 <= r < 1.008 for ratios in seventh.values() for r in ratios)
    modes = _modes("stablelm")
    for rec in ("3", "6"):
        default = [f["replay_median_ns"][rec] for f in recorded_runs(modes, "forked_turn")]
        reference = [f["replay_median_ns"][rec] for f in recorded_runs(modes, "reference")]
        assert min(default) <= max(reference)
    compared = compare_modes(modes, modes["reference"])
    assert all(compared[m]["shifts_vs_reference"]["shifted"] == [] for m in MODES["stablelm"])


def test_the_records_on_the_floor_turn_between_the_two_references_as_well():
    """Records 7 and 9 differ from the first reference in every default run, and in the second
    reference too; against the second reference every default run has every verdict the same."""
    modes = _modes("stablelm")
    live = live_medians(str(DATA / "stablelm" / "live.json"))
    first = compare_modes(modes, modes["reference"], live)
    second = compare_modes(modes, modes["reference:2"])
    for mode in ("forked_turn", "forked_turn:2", "forked_turn:3", "reference:2"):
        assert first[mode]["verdicts_vs_reference"]["differ"] == ["7", "9"], mode
    for mode in ("forked_turn", "forked_turn:2", "forked_turn:3"):
        assert second[mode]["verdicts_vs_reference"]["differ"] == [], mode
    margins = first["reference:2"]["verdicts_vs_reference"]["margins"]
    assert margins["7"]["reference_gap"] == pytest.approx(-0.0210, abs=5e-5)
    assert margins["9"]["reference_gap"] == pytest.approx(-0.0199, abs=5e-5)


def test_llama3s_one_turned_verdict_sits_on_the_floor():
    """llama3's record 17 (and 21, the same fusion) was 2.02 % faster than live in the reference,
    0.02 % past the 2 % floor, and 1.70 % in the default."""
    modes = _modes("llama3")
    live = live_medians(str(DATA.parent / "fidelity" / "llama3" / "live.json"))
    verdicts = compare_modes(modes, modes["reference"], live)["forked_turn"]["verdicts_vs_reference"]
    assert verdicts["differ"] == ["17", "21"] and verdicts["compared"] == 26
    assert verdicts["margins"]["17"]["reference_gap"] == pytest.approx(-0.0202, abs=5e-5)
    assert verdicts["margins"]["17"]["gap"] == pytest.approx(-0.0170, abs=5e-5)


def test_phi2s_run_was_lost_to_the_benchs_limit_falling_in_a_pandas_import():
    """The default's replays all finished at 28 s; its 30 s limit fell in the diff after them, in
    pandas' first import: that mode kept nothing, and the reference's diff met pandas half imported."""
    session = ROUND / "sessions" / "phi2"
    assert not (session / "modes.json").exists()
    err = (session / "bench.err").read_text()
    assert "[forked_turn] fusiondiff roundtrip: [####################] 8/8 done, 28 s elapsed" in err
    assert "partially initialized module 'pandas'" in err and "deepdiff" in err
    figures = json.loads((session / "forked_turn" / "bench_mode.json").read_text())
    assert figures["stopped_at_limit"] and figures["limit_s"] == 30.0 and 30.0 < figures["wall_s"] < 30.1
    assert figures["median_s"] is None and figures["processes"] == []
    assert len(list((session / "forked_turn" / "logs").glob("*.phases.json"))) == 8


# ---------------------------------------------------------------- where the inputs sit


def _placements(name: str) -> dict[tuple[str, ...], list[float]]:
    """Per set of input pointers, the cold-L2 medians of every round and variant that had it."""
    groups: dict[tuple[str, ...], list[float]] = collections.defaultdict(list)
    for line in (ROUND / "probes" / "placement" / f"place_{name}.jsonl").read_text().splitlines():
        row = json.loads(line)
        assert row["kernels"] > 0
        groups[tuple(row["ptrs"])].append(row["median_ns"])
    return groups


def _apart(groups: dict[tuple[str, ...], list[float]]) -> float:
    """The largest ratio between two placements whose medians do not overlap (1.0 if all overlap)."""
    return max(
        [min(high) / max(low) for low in groups.values() for high in groups.values() if min(high) > max(low)],
        default=1.0,
    )


@pytest.mark.parametrize(("name", "apart"), [("stablelm_6", 1.003), ("stablelm_9", 1.018)])
def test_where_the_inputs_sit_moves_a_cold_median_by_up_to_two_and_a_half_percent(name, apart):
    """7 rounds of 7 placements in one process (pads of 0 to 1031 MB before fresh copies of the
    inputs; some pads left the inputs where they were). stablelm #9: its inputs 1 MB further
    (pad 1 MB) ran 32736 to 32944 ns in all 7 rounds, with pad 17 MB 33552 to 33727 ns: 2.5 % apart
    at the centres, as much as the verdicts on the 2 % floor move between two reference runs.
    stablelm #6: 19712 to 19824 ns where the script put them, 19904 to 20192 ns behind 1031 MB."""
    groups = _placements(name)
    assert len(groups) >= 5
    assert _apart(groups) > apart
    centres = [statistics.median(v) for v in groups.values()]
    assert max(centres) / min(centres) > 1.012


def test_llama3s_placements_overlap_from_round_to_round():
    """llama3 #3 (95 us, 2 inputs): three placements; their centres lie 2.0 % apart, but their
    rounds overlap (each placement's 7 to 35 medians spread 1.1 to 2.2 %)."""
    groups = _placements("llama3_3")
    assert sorted(len(v) for v in groups.values()) == [7, 7, 35]
    assert _apart(groups) == 1.0
    centres = [statistics.median(v) for v in groups.values()]
    assert max(centres) / min(centres) == pytest.approx(1.020, abs=0.001)


# ---------------------------------------------------------------- where the compile goes


def _inclusive(name: str) -> dict[str, float]:
    text = (ROUND / "probes" / "compile_where" / f"where_{name}.txt").read_text()
    section = text.split("== nvFuser functions, inclusive\n", 1)[1].split("== leaves", 1)[0]
    return {m[2]: float(m[1]) for m in re.finditer(r"^\s*([\d.]+) %  (.+)$", section, re.MULTILINE)}


@pytest.mark.parametrize("name", ["llama3_16", "stablelm_8"])
def test_a_multi_second_compile_is_the_segmenter_trying_schedulers(name):
    """py-spy --native of the repro script's run: of nvFuser's first execute, 96-97 % is
    SegmentCandidateFinder, 95-96 % Schedule::canSchedule (building IterDomainGraphs)."""
    shares = _inclusive(name)
    run = shares["nvfuser::FusionExecutorCache::runFusionWithInputs"]
    assert shares["nvfuser::SegmentCandidateFinder::SegmentCandidateFinder"] / run > 0.95
    assert shares["nvfuser::Schedule::canSchedule"] / run > 0.94
    assert "nvfuser::KernelExecutor::compile" not in shares or shares["nvfuser::KernelExecutor::compile"] / run < 0.05


def test_a_quick_fusions_compile_is_its_kernel_compile():
    shares = _inclusive("stablelm_3")
    run = shares["nvfuser::FusionExecutorCache::runFusionWithInputs"]
    assert shares["nvfuser::KernelExecutor::compile"] / run > 0.6
    assert shares.get("nvfuser::SegmentCandidateFinder::SegmentCandidateFinder", 0.0) / run < 0.1


def test_the_scripts_wall_times_are_logged():
    log = (ROUND / "batch2_log.txt").read_text()
    walls = {m[1]: float(m[2]) for m in re.finditer(r"^(\w+) wall ([\d.]+) s", log, re.MULTILINE)}
    assert walls == {"llama3_16": 15.68, "stablelm_8": 11.56, "stablelm_3": 6.98}


# ---------------------------------------------------------------- the GPU tests


def test_the_gpu_tests_as_they_ran():
    tests = ROUND / "gpu_tests"
    assert "1 passed" in (tests / "forked_turn_gated.txt").read_text()
    assert "9 passed" in (tests / "end_to_end.txt").read_text()
    assert "0/11 scenarios diagnosed correctly" in (tests / "zoo_one_process_first.txt").read_text()
    assert "0/11 scenarios diagnosed correctly" in (tests / "zoo_one_process_kept.txt").read_text()
    apart = (tests / "zoo_sides_apart.txt").read_text()
    assert "10/11 scenarios diagnosed correctly" in apart and "KeyError: 'script'" in apart


def test_a_default_turn_is_its_compile_and_a_quarter_second():
    """Per run, the median turn's compile (the ``scripts`` phase) 1.36 to 2.10 s, its CUDA context
    0.23 to 0.25 s, its samples 0.07 s: the run's median follows the compile."""
    for session in ("stablelm", "llama3"):
        for figures in recorded_runs(_modes(session), "forked_turn"):
            phases = figures["phase_medians_s"]
            assert 1.35 < phases["scripts"] < 2.1
            assert 0.23 < phases["cuda_context"] < 0.26 and phases["samples"] < 0.08
    stablelm = recorded_runs(_modes("stablelm"), "forked_turn")
    by_compile = sorted(stablelm, key=lambda f: f["phase_medians_s"]["scripts"])
    assert by_compile == sorted(stablelm, key=lambda f: f["median_s"])
