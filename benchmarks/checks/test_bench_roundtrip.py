"""The round-trip benchmark's figures per mode (issue #28) on made-up inputs, without a GPU: the cost
per distinct fusion from process ends and from a long-lived process's phases, median and worst, the
ratios to the floor, and the verdicts against the reference's."""

from __future__ import annotations

import inspect

import pytest

from benchmarks.bench_roundtrip import (
    MODES,
    compare_modes,
    floor_costs,
    margin_words,
    mode_arguments,
    mode_limits,
    phase_medians,
    process_costs,
    ratios_to,
    spread,
    verdict_differences,
    verdict_margins,
)
from fusiondiff.roundtrip import roundtrip


def test_each_fusion_costs_the_time_since_the_replay_before_it_ended_on_its_gpu():
    processes = [
        {"device": "0", "scripts": 1, "ended_s": 9.0},  # the first: its cold start counts
        {"device": "0", "scripts": 1, "ended_s": 11.0},
        {"device": "0", "scripts": 2, "ended_s": 15.0},  # a batch of 2: shared evenly
        {"device": "1", "scripts": 1, "ended_s": 4.0},
        {"device": "0", "scripts": 1, "ended_s": None},  # never ended (stopped): not counted
    ]
    assert sorted(process_costs(processes)) == [2.0, 2.0, 2.0, 4.0, 9.0]


def test_a_fusion_in_the_floors_process_costs_its_script_and_its_share_of_the_samples():
    phases = {
        "phases": [
            {"name": "imports", "start": 0.0, "end": 4.0},
            {"name": "scripts", "start": 5.0, "end": 6.0},
            {"name": "scripts", "start": 6.0, "end": 6.5},
            {"name": "samples", "start": 7.0, "end": 10.0},
        ],
        "events": [
            {"name": "fusiondiff: a: 1 kernel(s), median 20 us over 30 cold-L2 samples", "at": 9.0},
            {"name": "fusiondiff: warning: something else", "at": 9.5},
            {"name": "fusiondiff: b: 3 kernel(s), median 9 us over 30 cold-L2 samples", "at": 9.8},
            {"name": "fusiondiff: c: 1 kernel(s), after the samples", "at": 11.0},
        ],
    }
    assert floor_costs([phases]) == pytest.approx([1.0 + 2.0, 0.5 + 0.8])
    assert floor_costs([{"phases": [{"name": "scripts", "start": 0.0, "end": 2.0}], "events": []}]) == [2.0]


def test_median_worst_and_ratios_to_the_floor():
    assert spread([3.0, 1.0, 2.0, 10.0]) == {
        "count": 4,
        "median_s": 2.5,
        "worst_s": 10.0,
        "first_s": 3.0,
        "median_after_first_s": 2.0,
        "worst_after_first_s": 10.0,
    }
    # the first fusion also fills the pipeline: its cost is told apart from the rest's worst
    assert spread([12.0, 2.0, 2.5, 1.5])["worst_after_first_s"] == 2.5
    assert spread([4.0])["worst_after_first_s"] is None
    assert spread([12.0, 2.0, 2.5, 1.5])["median_after_first_s"] == 2.0
    assert spread([4.0])["median_after_first_s"] is None
    assert spread([]) == {
        "count": 0,
        "median_s": None,
        "worst_s": None,
        "first_s": None,
        "median_after_first_s": None,
        "worst_after_first_s": None,
    }
    floor = {"median_s": 1.0, "worst_s": 2.0, "wall_s": 20.0}
    assert ratios_to({"median_s": 3.0, "worst_s": 5.0, "wall_s": 50.0}, floor) == {
        "median": 3.0,
        "worst": 2.5,
        "wall": 2.5,
    }
    assert ratios_to({"median_s": None, "worst_s": 5.0, "wall_s": 50.0}, None) == {
        "median": None,
        "worst": None,
        "wall": None,
    }


def test_verdicts_are_compared_on_the_records_both_modes_replayed():
    reference = {"0": "SAME", "1": "SAME", "2": "FASTER", "3": "SAME"}
    assert verdict_differences(reference, dict(reference)) == {"compared": 4, "differ": [], "same": True}
    stopped = {"0": "SAME", "2": "SLOWER"}  # a mode stopped at its limit replayed fewer
    assert verdict_differences(reference, stopped) == {"compared": 2, "differ": ["2"], "same": False}
    assert verdict_differences(reference, {})["same"] is False  # nothing compared is not "the same"


def test_modes_compared_with_the_floor_and_the_reference():
    figures = {
        "reference": {"median_s": 9.0, "worst_s": 12.0, "wall_s": 110.0, "verdicts": {"0": "SAME"}},
        "pipeline": {"median_s": 1.5, "worst_s": 6.0, "wall_s": 25.0, "verdicts": {"0": "SAME"}},
        "floor": {"median_s": 1.0, "worst_s": 2.0, "wall_s": 20.0, "verdicts": {"0": "SAME"}},
    }
    compared = compare_modes(figures, figures["reference"])
    assert compared["pipeline"]["ratios_to_floor"] == {"median": 1.5, "worst": 3.0, "wall": 1.25}
    assert compared["floor"]["ratios_to_floor"] is None
    assert all(c["verdicts_vs_reference"]["same"] for c in compared.values())


def test_a_differing_verdict_shows_where_both_replays_sat_against_the_live_median_and_the_floor():
    live = {"0": 20000.0, "1": 1000.0, "2": 5000.0}
    reference = {"0": 19580.0, "1": 1000.0, "2": 5000.0}
    mode = {"0": 19620.0, "1": 1400.0}
    margins = verdict_margins(["0", "1", "2"], live, reference, mode)
    assert sorted(margins) == ["0", "1"]  # record 2: no median in the mode (stopped), left out
    assert margins["0"] == pytest.approx({"floor": 0.02, "reference_gap": -0.021, "gap": -0.019})
    assert margins["1"]["floor"] == pytest.approx(0.3)  # 300 ns: the floor of a 1 us kernel
    assert margin_words({"0": margins["0"]}) == (
        "record 0: -2.10 % of live in the reference, -1.90 % here (floor 2.00 %)"
    )
    figures = {"reference": {"verdicts": {"0": "FASTER"}, "replay_median_ns": reference}}
    figures["default"] = {"verdicts": {"0": "SAME"}, "replay_median_ns": mode}
    compared = compare_modes(figures, figures["reference"], live)
    assert compared["default"]["verdicts_vs_reference"]["margins"] == {"0": margins["0"]}
    assert "margins" not in compare_modes(figures, figures["reference"])["default"]["verdicts_vs_reference"]


def test_phase_medians_and_each_modes_round_trip_arguments():
    docs = [{"seconds": {"imports": 4.0, "samples": 1.0}}, {"seconds": {"imports": 5.0}}, {"seconds": {"imports": 6.0}}]
    assert phase_medians(docs) == {"imports": 5.0, "samples": 1.0}
    assert mode_arguments("reference", 12, 4) == {"prestart": False, "forked": False}
    assert mode_arguments("ahead", 12, 4) == {"prestart": True, "ahead": 1, "prepare": "imports", "forked": False}
    assert mode_arguments("pipeline", 12, 3) == {"prestart": True, "ahead": 3, "prepare": "gpu", "forked": False}
    assert mode_arguments("context", 12, 3, 6) == {"prestart": True, "ahead": 6, "prepare": "context", "forked": False}
    assert mode_arguments("floor", 12, 4) == {"prestart": False, "batch": 12, "forked": False}
    assert mode_arguments("forked", 12, 4) == {"prestart": True, "ahead": 3, "prepare": "context", "forked": True}
    assert mode_arguments("forked_turn", 12, 4) == {"prestart": True, "ahead": 1, "prepare": "imports", "forked": True}
    assert mode_arguments("forked_handover", 12, 4) == {
        "prestart": True,
        "ahead": 1,
        "prepare": "handover",
        "forked": True,
    }
    assert set(MODES) == {
        "reference",
        "ahead",
        "pipeline",
        "context",
        "forked",
        "forked_turn",
        "forked_handover",
        "floor",
    }
    # forked_turn is the round trip's default: what a user gets without options
    defaults = {n: p.default for n, p in inspect.signature(roundtrip).parameters.items()}
    assert {k: defaults[k] for k in mode_arguments("forked_turn", 12, 4)} == mode_arguments("forked_turn", 12, 4)
    with pytest.raises(ValueError):
        mode_arguments("fast", 12, 4)


def test_each_mode_is_bounded_by_one_limit_or_its_own():
    assert mode_limits("120", ["floor", "pipeline"]) == {"floor": 120.0, "pipeline": 120.0}
    assert mode_limits("floor=60,reference=170", ["floor", "pipeline", "reference"]) == {
        "floor": 60.0,
        "pipeline": 150.0,
        "reference": 170.0,
    }
    with pytest.raises(SystemExit):
        mode_limits("fast=10", ["floor"])


def test_a_mode_may_run_twice_and_takes_its_modes_limit():
    from benchmarks.bench_roundtrip import base_mode

    assert base_mode("reference:2") == "reference" and base_mode("context") == "context"
    modes = ["reference", "context", "reference:2"]
    assert mode_limits("context=60,reference=150", modes) == {"reference": 150.0, "context": 60.0, "reference:2": 150.0}
    assert mode_limits("reference:2=90", modes, default_s=10) == {
        "reference": 10.0,
        "context": 10.0,
        "reference:2": 90.0,
    }
    with pytest.raises(SystemExit, match="unknown mode"):
        mode_limits("fast:2=3", modes)


def test_sample_shifts_tell_a_moved_fusion_from_one_within_its_spread():
    from benchmarks.bench_roundtrip import sample_shifts

    base = [100.0 + (i % 5) for i in range(30)]  # 100 to 104, the reference's spread
    moved = [x * 1.02 for x in base]
    alike = base[1:] + base[:1]
    shifts = sample_shifts({"3": moved, "7": alike, "9": [1.0]}, {"3": base, "7": base, "9": base, "11": base})
    assert shifts["compared"] == 2 and shifts["shifted"] == ["3"]  # 9 has one sample, 11 no replay
    assert shifts["max_ratio"] == pytest.approx(1.02) and shifts["min_ratio"] == pytest.approx(1.0)
    assert shifts["rows"]["7"]["p"] > 0.5


def test_shift_words_count_the_shifted_fusions_and_name_their_records():
    from benchmarks.bench_roundtrip import shift_words

    def shifts(shifted: list[str]) -> dict:
        return {"compared": 12, "min_ratio": 0.9914, "max_ratio": 1.0042, "shifted": shifted}

    assert shift_words(shifts([])).endswith("shifted (p < 0.005): none of 12 fusions")
    assert shift_words(shifts(["24"])).endswith("shifted (p < 0.005): 1 of 12 fusions (record 24)")
    assert shift_words(shifts(["3", "6"])) == (
        "medians -0.9 % to +0.4 % of the reference's; shifted (p < 0.005): 2 of 12 fusions (records 3, 6)"
    )
    assert shift_words(None) == "" and shift_words({**shifts([]), "compared": 0}) == ""


def test_repeated_runs_give_each_modes_median_over_its_runs_and_the_records_all_apart_from_the_references():
    from benchmarks.roundtrip_repeats import repeat_lines, repeat_summary

    def run(median_s, **medians):
        return {"median_s": median_s, "replay_median_ns": {k.removeprefix("r"): v for k, v in medians.items()}}

    figures = {
        "reference": run(5.0, r0=100.0, r1=200.0),
        "default": run(3.0, r0=103.0, r1=199.0),
        "reference:2": run(4.0, r0=101.0, r1=201.0),
        "default:2": run(2.0, r0=102.0, r1=202.0),
        "default:3": run(4.0, r0=104.0, r1=200.5),
        "floor": run(1.0, r0=90.0, r1=190.0),  # run once: no claim either way
    }
    summary = repeat_summary(figures)
    assert summary["costs"]["default"] == {"runs": 3, "medians_s": [3.0, 2.0, 4.0], "median_of_medians_s": 3.0}
    assert summary["costs"]["reference"]["median_of_medians_s"] == 4.5
    assert set(summary["apart"]) == {"default"}  # the floor ran once
    apart = summary["apart"]["default"]
    assert apart["chance"] == pytest.approx(2 / 10)  # 3 and 2 runs: 2 of the 10 orders are all apart
    # record 0: 102-104 against 100-101, all above; record 1 overlaps (199 is below 200 and 201)
    assert apart["records"] == {"0": {"ratio": pytest.approx(103.0 / 100.5), "above": True}}
    assert repeat_lines(summary) == [
        "reference x2: median of the runs' medians 4.50 s (4.00 to 5.00)",
        "default x3: median of the runs' medians 3.00 s (2.00 to 4.00)",
        "default, runs all apart from the reference's (by chance alone, 1 record in 5): "
        "record 0 +2.49 % (every run above)",
    ]


def test_the_modes_report_from_recorded_runs_prints_and_writes_every_part(monkeypatch, tmp_path, capsys):
    """``--modes`` end to end on the CPU, each run's figures taken from the sixth round's stablelm
    runs on the H200 instead of running it: the table, the margins of a differing verdict, the
    repeat summary, ``modes.json`` with all of them, and exit 1 (a verdict differs)."""
    import argparse
    import json
    from pathlib import Path

    import benchmarks.bench_roundtrip as bench

    data = Path(__file__).resolve().parents[2] / "tests" / "data" / "roundtrip_modes"
    recorded = json.loads((data / "sixth_round" / "sessions" / "stablelm_second" / "modes.json").read_text())["modes"]
    monkeypatch.setattr(bench, "run_mode", lambda live, mode, *rest: recorded[mode])
    args = argparse.Namespace(
        live=str(data / "stablelm" / "live.json"),
        workdir=str(tmp_path),
        gpus="0",
        limit_s="60",
        modes=",".join(recorded),
        ahead=1,
        context_ahead=6,
        json=None,
    )
    assert bench.main_modes(args) == 1
    out = capsys.readouterr().out
    assert "record 9: -2.17 % of live in the reference, -1.48 % here (floor 2.00 %)" in out
    assert "forked_turn x3: median of the runs' medians 3.16 s (2.75 to 3.53)" in out
    written = json.loads((tmp_path / "modes.json").read_text())
    assert set(written) == {"live", "gpu", "ahead", "modes", "compared", "repeats"}
    assert written["compared"]["forked_turn"]["verdicts_vs_reference"]["differ"] == ["9"]
    assert sorted(written["repeats"]["apart"]["forked_turn"]["records"], key=int) == ["3", "5", "6", "8"]


def test_the_diffs_lazy_imports_are_made_before_any_modes_limit_is_armed(monkeypatch, tmp_path):
    """A limit that fell in pandas' first import lost the seventh round's phi-2 run on the H200
    (``benchmarks/RESULTS.md``): the bench imports deepdiff, and pandas through it, first."""
    import argparse
    import json
    import sys
    from pathlib import Path

    import benchmarks.bench_roundtrip as bench

    data = Path(__file__).resolve().parents[2] / "tests" / "data" / "roundtrip_modes"
    recorded = json.loads((data / "seventh_round" / "sessions" / "llama3" / "modes.json").read_text())["modes"]
    order: list[str] = []
    monkeypatch.setattr(bench, "import_before_limits", lambda: order.append("imports"))
    monkeypatch.setattr(bench, "run_mode", lambda live, mode, *rest: order.append(mode) or recorded[mode])
    args = argparse.Namespace(
        live=str(data.parent / "fidelity" / "llama3" / "live.json"),
        workdir=str(tmp_path),
        gpus="0",
        limit_s="60",
        modes="forked_turn,reference",
        ahead=1,
        context_ahead=6,
        json=None,
    )
    bench.main_modes(args)
    assert order == ["imports", "forked_turn", "reference"]
    monkeypatch.undo()
    bench.import_before_limits()
    assert "deepdiff" in sys.modules
