"""Diagnoses on captures recorded on the H200 (tests/data/README.md says how each was made)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from fusiondiff.diff import diff
from fusiondiff.front.api import diff_files
from fusiondiff.front.cli import main
from fusiondiff.io.store import load_capture
from fusiondiff.recording.nvfuser_adapter import canonical_source
from fusiondiff.replay.repro import render_repro
from fusiondiff.report.formats.diff_text import render_diff_text
from fusiondiff.report.words.questions import kernel_line
from repro.zoo.run_zoo import SCENARIOS, ZooResult, planted_cause, run_all

DATA = Path(__file__).parent.parent / "data"


def test_seed_forward_replays_match_the_live_capture():
    result = diff_files(DATA / "seed" / "live_forward.json", DATA / "seed" / "replay_forward.json")
    assert len(result.pairs) == 13 and not result.unmatched
    assert all(p.timing.verdict == "SAME" for p in result.pairs)
    for pair in result.pairs:
        ratio = pair.timing.median_b_ns / pair.timing.median_a_ns
        assert abs(ratio - 1) < 0.02, pair.label  # within 2 %, as the issue asks
        assert all(k.timing.verdict == "SAME" for k in pair.kernels)
    # the only findings: nvFusion1/5/9, whose rebuilt definition adds index casts (see cuda_source data)
    assert {f.rule for f in result.findings} == {"cuda_source"}
    assert sorted(f.fusions[0].split()[0] for f in result.findings) == ["nvFusion1", "nvFusion5", "nvFusion9"]
    assert all(f.explained_ns == 0 for f in result.findings)


def test_demo_replay_of_one_fusion_against_the_whole_session_compares_that_fusion():
    # `fusiondiff demo` on the H200: the seed forward live (13 fusions) against the replay of
    # fusiondiff's repro of nvFusion0, the usual shape of a bug report
    result = diff_files(DATA / "cli" / "demo_live.json", DATA / "cli" / "demo_replay.json")
    assert [p.label for p in result.pairs] == ["nvFusion0 [forward] vs fusion0"]
    assert result.b_replays_subset and len(result.not_replayed) == 12
    assert result.comparable
    text = render_diff_text(result)
    assert (
        "same speed: the 1 matched fusion(s) SAME within noise" in text
        and "(B replays 1 of A's fusions; 12 not replayed)" in text
    )
    assert "not replayed by B (12 fusion(s) of A)" in text
    # a live capture that lacks fusions is a difference, not a partial replay
    live = load_capture(DATA / "cli" / "demo_live.json")
    reverse = diff(dataclasses.replace(live, fusions=live.fusions[:1]), live)
    assert not reverse.b_replays_subset and not reverse.comparable


def test_cli_capture_with_an_idle_clock_at_start_is_comparable_to_its_repro():
    # `fusiondiff capture thunder_script.py 1` read the SM clock at 345 MHz before the first kernel;
    # the samples ran at 1980 MHz on both sides, so the runs are like for like
    live = load_capture(DATA / "cli" / "live.json")
    assert live.environment.sm_clock_mhz == 345 and live.fusions[0].sm_clock_mhz == (1980, 1980)
    assert live.fusions[0].call_count == 3 and live.fusions[0].inputs[0].storage_offset == 1
    for replay in ("replay_ours.json", "replay_inputs.json"):
        result = diff_files(DATA / "cli" / "live.json", DATA / "cli" / replay)
        assert result.comparable, (replay, [f.evidence for f in result.findings])


def test_replay_with_the_live_inputs_says_so_and_keeps_their_layout():
    replay = load_capture(DATA / "cli" / "replay_inputs.json")
    assert any("inputs replaced" in w for w in replay.warnings)
    live = load_capture(DATA / "cli" / "live.json")
    assert replay.fusions[0].inputs == live.fusions[0].inputs


def test_in_place_fusion_keeps_its_aliased_output_in_the_repro():
    # thunder.jit of `x.add_(1); return x * 2`: Thunder's copy_ becomes fd.add_output(out, x)
    capture = load_capture(DATA / "cli" / "inplace.json")
    aliasing = capture.fusions[0]
    assert "fd.add_output(tv2, tv0)" in aliasing.definition
    assert "fd.add_output(tv2, tv0)" in render_repro(aliasing, capture.environment)


def test_storage_offset_is_the_top_finding_against_nvfusers_repro():
    result = diff_files(DATA / "offset" / "live.json", DATA / "offset" / "replay_nvfuser.json")
    (pair,) = result.pairs
    assert pair.timing.verdict == "FASTER"
    assert result.findings[0].rule == "storage_offset"
    assert "kernel_variant" in [f.rule for f in result.findings]


def test_fusiondiffs_repro_keeps_the_offset_and_is_comparable(capsys):
    result = diff_files(DATA / "offset" / "live.json", DATA / "offset" / "replay_fusiondiff.json")
    assert result.comparable and not result.findings
    assert main(["diff", str(DATA / "offset" / "live.json"), str(DATA / "offset" / "replay_fusiondiff.json")]) == 0
    assert capsys.readouterr().out.startswith("kernel: same speed: the 1 matched fusion(s) SAME within noise")
    assert re.fullmatch(
        r"same speed: the 1 matched fusion\(s\) SAME within noise \(\+-\d+\.\d %\); recorded properties identical",
        kernel_line(result),
    )


def test_round_trip_cast_is_the_whole_cuda_source_difference():
    live = load_capture(DATA / "cuda_source" / "live.json").fusions[0]
    replay = load_capture(DATA / "cuda_source" / "replay.json").fusions[0]
    changed = [(a, b) for a, b in zip(live.kernels, replay.kernels) if a.source_hash != b.source_hash]
    assert [a.normalized_name for a, _ in changed] == ["nvfuser_resize_g2", "nvfuser_resize_g3"]
    for a, b in changed:
        text_a = canonical_source(live.cuda_sources[a.name])
        text_b = canonical_source(replay.cuda_sources[b.name])
        assert "__to_index" in text_b and "__to_index" not in text_a
        assert a.launch == b.launch


def test_timingtest_paths_agree_under_the_protocol():
    result = diff_files(DATA / "timingtest" / "live.json", DATA / "timingtest" / "script.json")
    assert result.comparable


PLANTED = {
    "misaligned_input": "storage_offset",
    "noncontiguous_input": "input_strides",
    "option_live_only": "options",
    "runtime_reuse": "runtime_reuse",
    "embedding_index_values": "index_value_range",
    "l2_cold_vs_warm": "l2_mode",
    "seed_method": "measurement",
    "cupti_conflict": "measurement",
    "wrapper_several_definitions": "definition",
    "constant_precision": "constant_precision",
    "control": None,
}
"""The cause each zoo scenario plants (repro/zoo/README.md), written here rather than read from
the scenario modules, so the diagnosis is checked against a table the zoo code does not fill."""


def test_zoo_table_names_every_scenario_and_its_cause():
    assert set(PLANTED) == set(SCENARIOS)
    assert {s: planted_cause(s) for s in SCENARIOS} == PLANTED


@pytest.mark.parametrize("folder", ["zoo", "h100/zoo"])  # recorded on an H200, then on an H100
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_zoo_pair_is_diagnosed(scenario, folder):
    result = diff_files(DATA / folder / scenario / "live.json", DATA / folder / scenario / "replay.json")
    # the whole output: every finding, whatever its question (failures, kernel time, then host)
    rules = [f.rule for f in result.findings]
    if PLANTED[scenario] is None:
        assert result.findings_of("kernel") == () and result.exit_code() == 0, rules
    else:
        assert rules and rules[0] == PLANTED[scenario], rules


@pytest.mark.parametrize("folder", ["zoo", "h100/zoo"])
def test_the_zoo_runner_judges_each_recorded_pair_as_the_gpu_test_does(folder):
    """``tests/gpu/test_zoo.py`` passes when every :class:`ZooResult` is ``correct``: on the recorded
    pairs, each is, the control among them with no finding of kernel time or fidelity."""
    results = run_all(None, recorded=DATA / folder)
    assert [r.scenario for r in results] == list(SCENARIOS)
    assert [r.scenario for r in results if not r.correct] == []
    (control,) = [r for r in results if r.planted is None]
    assert dict(control.findings_of)["kernel"] == () and dict(control.findings_of)["fidelity"] == ()


def test_a_control_with_a_finding_of_kernel_time_is_not_diagnosed_correctly():
    """A setup finding on the control's kernel question (another process on a side's GPU) still
    passes the gate, yet the control is to show nothing: the runner says it is wrong."""
    quiet = ZooResult(
        "control",
        None,
        None,
        (),
        25.6,
        25.5,
        exit_code=0,
        questions=(("kernel", True), ("host", True), ("fidelity", True)),
        findings_of=(("kernel", ()), ("host", ()), ("fidelity", ())),
    )
    assert quiet.correct
    noisy = dataclasses.replace(
        quiet,
        top_finding="other_processes",
        findings=("other_processes",),
        findings_of=(("kernel", ("other_processes",)), ("host", ()), ("fidelity", ())),
    )
    assert not noisy.correct
