"""The round trip of issue #10 on captures recorded on the H200 (tests/data/fidelity/, made by
repro/fidelity/check_round_trip.py): litgpt training steps whose fusions were written as fusiondiff
repros and replayed in a fresh process compile the same CUDA source, with the same constants, at
the same speed; nvFuser's own repro of an embedding gather crashes and the diff says why."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from fusiondiff.front.api import diff_files
from fusiondiff.io.store import load_capture
from fusiondiff.replay.repro import render_repro
from fusiondiff.report.formats.diff_text import verdict_line

DATA = Path(__file__).parent.parent / "data" / "fidelity"
TRAINING_STEPS = {"llama3": 26, "pythia": 12, "qwen": 18}
FASTER: dict[str, str] = {}
"""The replays not SAME: none. llama3's first-layer fusion nvFusion3, 89.58 us live and 87.68 us
replayed (0.979x, nothing recorded differing), read FASTER when the floor was 2 % of A's median;
judged between processes it is SAME: two processes of one 50 us+ fusion differ by up to 2.2 % on
the H200, and the floor of one process against one, over 26 fusions, is +-4.6 %
(:func:`test_llama3_first_layer_gap_is_within_the_floor`)."""


def test_llama3_first_layer_gap_is_within_the_floor():
    result = diff_files(DATA / "llama3" / "live.json", DATA / "llama3" / "replay.json")
    (pair,) = [p for p in result.pairs if p.label == "nvFusion3 [forward] vs forward_nvFusion3:fusion0"]
    t = pair.timing
    assert 0.975 < t.ratio < 0.985 and t.verdict == "SAME"
    assert abs(math.log(t.ratio)) < t.floor and t.spread == "calibration" and t.spread_of == "H200 50+ us"


@pytest.mark.parametrize(("case", "fusions"), TRAINING_STEPS.items())
def test_training_step_round_trip_is_faithful(case, fusions):
    live, replay = load_capture(DATA / case / "live.json"), load_capture(DATA / case / "replay.json")
    assert {f.trace for f in live.fusions} == {"forward", "backward"}
    result = diff_files(DATA / case / "live.json", DATA / case / "replay.json")
    assert len(result.pairs) == fusions and not result.unmatched
    moved = [p for p in result.pairs if p.timing.verdict != "SAME"]
    assert [p.label for p in moved] == ([FASTER[case]] if case in FASTER else []), verdict_line(result)
    assert all(p.timing.verdict == "FASTER" and 0.975 < p.timing.ratio < 1 for p in moved)
    assert result.exit_code() == (1 if moved else 0), verdict_line(result)
    # identical CUDA source for every kernel, the same exact constants for every fusion
    for pair in result.pairs:
        fa, fb = live.fusions[pair.index_a], replay.fusions[pair.index_b]
        assert fa.exact_constants == fb.exact_constants
        assert fa.structure_hash == fb.structure_hash
        assert not pair.unmatched_kernels and len(pair.kernels) == len(fa.kernels)
        ka = {k.normalized_name: k.source_hash for k in fa.kernels}
        kb = {k.normalized_name: k.source_hash for k in fb.kernels}
        assert ka == kb and all(h for name, h in ka.items() if name.startswith("nvfuser_"))
    # nothing recorded differs; a kernel-level gap inside a SAME fusion is reported, not counted
    assert {f.rule for f in result.findings} <= {"unexplained"}
    assert all(f.explained_ns < 0.05 * result.pairs[0].timing.median_a_ns + 1000 for f in result.findings)


def test_rounded_constants_are_in_the_recorded_definitions_and_restored_by_the_repro():
    live = load_capture(DATA / "pythia" / "live.json")
    gelu = [f for f in live.fusions if "1.4142135623730951" in f.exact_constants]
    assert gelu and all("1.41421," in f.definition or "1.41421)" in f.definition for f in gelu)
    script = render_repro(gelu[0], live.environment)
    assert "1.4142135623730951" in script and "#   1.41421 -> 1.4142135623730951" in script


def test_index_scalars_are_defined_as_index_in_the_repro_of_a_rotary_fusion():
    live = load_capture(DATA / "llama3" / "live.json")
    rotary = [f for f in live.fusions if "fd.ops.pad(" in f.definition]
    assert rotary
    for f in rotary:
        assert "fd.define_scalar(64, dtype=DataType.Index)" in render_repro(
            f, live.environment
        ) or "fd.define_scalar(1024, dtype=DataType.Index)" in render_repro(f, live.environment)


def test_pointwise_control_is_the_same_with_identical_properties():
    result = diff_files(DATA / "control" / "live.json", DATA / "control" / "replay.json")
    assert result.comparable and result.exit_code(strict=True) == 0
    assert (
        verdict_line(result)
        == "same speed: the 1 matched fusion(s) SAME within noise (+-4.6 %); recorded properties identical"
    )


def test_nvfusers_own_repro_of_a_gather_crashes_and_the_diff_says_why():
    replay = load_capture(DATA / "crash" / "replay.json")
    failure = replay.fusions[0].failure
    assert failure is not None and failure.kind == "illegal_address" and failure.log_file == "replay.log"
    assert replay.fusions[0].timing.count == 0
    ids = replay.fusions[0].inputs[0]
    assert ids.min_value < 0  # make_tensor's ids, in about [-9, 10)
    result = diff_files(DATA / "crash" / "live.json", DATA / "crash" / "replay.json")
    assert result.exit_code() == 1 and result.failed
    assert verdict_line(result).startswith("B crashed: nvFusion0 [forward] vs fusion0 failed (illegal address)")
    first = result.findings[0]
    assert first.rule == "index_out_of_range" and first.role == "failure"
    table = next(e for e in first.data if e.field == "table")
    assert table.b == (1, 0, 128256)  # B failed: its input 1's dim 0 has 128256 rows
    assert result.findings[1].rule == "failed_execution"
    assert "make_tensor" in load_capture(DATA / "crash" / "live.json").fusions[0].repro_script
