"""The block level as recorded on the H200 by ``repro/blocks/verify.sh`` (tests/data/blocks/h200):
the seed RMSNorm live in a Thunder session against nvFuser's repro and against ``replay --inputs``,
a session whose second stream ran matmuls, and a litgpt training step with its round trip."""

from __future__ import annotations

import dataclasses
import statistics

import pytest

from fusiondiff.diff import diff
from fusiondiff.front.api import open_report
from fusiondiff.io.store import load_capture
from fusiondiff.report import render
from fusiondiff.report.views.occupancy import occupancy
from tests.blocks.conftest import BLOCKS

H200 = BLOCKS / "h200"


def _kernel(path: str):
    capture = load_capture(H200 / path)
    return capture, capture.fusions[0].kernels[0], capture.fusions[0].sm_timeline.kernels[0]


def test_every_cta_of_the_seed_was_measured_in_five_runs_with_identical_outputs():
    for path in ("seed/live.json", "seed/replay_nvfuser.json", "seed/replay_inputs.json"):
        capture, _, timeline = _kernel(path)
        assert capture.fusions[0].sm_timeline.outputs_identical
        assert len(timeline.runs) == 5 and {run.ctas for run in timeline.runs} == {4096}
        assert {run.sms_used for run in timeline.runs} == {132} and timeline.timer_resolution_ns == 32.0


@pytest.mark.parametrize("path", ["seed/live.json", "seed/replay_nvfuser.json", "contention/replay.json"])
def test_the_ctas_an_sm_held_at_once_are_what_the_gpus_limits_allow_the_probed_kernel(path):
    capture, kernel, timeline = _kernel(path)
    probed = dataclasses.replace(kernel.launch, registers_per_thread=timeline.registers_instrumented)
    assert timeline.stat("ctas_at_once") == occupancy(probed, capture.environment).blocks_per_sm


def test_live_against_nvfusers_repro_the_offset_kernel_needs_twice_the_waves():
    result = diff(load_capture(H200 / "seed/live.json"), load_capture(H200 / "seed/replay_nvfuser.json"))
    assert [f.rule for f in result.findings] == ["storage_offset", "kernel_variant", "cuda_source", "blocks_extra_wave"]
    waves = {e.field: (e.a, e.b) for e in result.findings[3].data}
    assert waves["waves"] == (8.0, 4.0) and waves["ctas_at_once"] == (4.0, 10.0)


def test_live_against_its_replay_on_the_same_inputs_nothing_differs_at_the_block_level_either():
    result = diff(load_capture(H200 / "seed/live.json"), load_capture(H200 / "seed/replay_inputs.json"))
    assert result.findings == () and result.exit_code() == 0


def test_matmuls_on_a_second_stream_held_80_sms_in_two_of_five_runs():
    live, _, timeline = _kernel("contention/live.json")
    assert [run.sms_used for run in timeline.runs] == [52, 52, 132, 132, 132]
    result = diff(live, load_capture(H200 / "contention/replay.json"))
    fewer = next(f for f in result.findings if f.rule == "blocks_fewer_sms")
    assert fewer.role == "setup"
    data = {e.field: (e.a, e.b) for e in fewer.data}
    assert data["sms_used_min"] == (52.0, 132.0) and data["runs_with_fewer_sms"] == (2.0, 0.0)
    html = render("html", open_report([str(H200 / "contention/live.json"), str(H200 / "contention/replay.json")]))
    assert "A: A (live) (run 1 of 5)" in html  # the run that used fewest SMs is the one drawn
    assert "132 [52-132]" in html


def test_the_training_steps_probe_cost_a_median_of_5_percent_and_at_most_24():
    step = load_capture(H200 / "step/live.json")
    overheads = [k.overhead for f in step.fusions for k in f.sm_timeline.measured]
    assert len(overheads) == 11
    assert statistics.median(overheads) == pytest.approx(0.046, abs=0.001)
    assert (
        max(overheads) == pytest.approx(0.239, abs=0.001) and max(overheads) < step.fusions[0].sm_timeline.max_overhead
    )
    refused = [k.refusal.code for f in step.fusions for k in f.sm_timeline.kernels if k.refusal is not None]
    # three ATen fills (not nvFuser's); one backward fusion whose segments mix 32- and 64-bit indexing
    assert sorted(refused) == ["no_source"] * 4 + ["not_generated"] * 3


def test_the_round_trip_of_the_step_replayed_every_fusion_with_its_timeline():
    live, replay = load_capture(H200 / "step/live.json"), load_capture(H200 / "step/replay.json")
    assert all(f.sm_timeline is not None for f in replay.fusions)
    assert {f.sm_timeline.file.split("/")[0] for f in replay.fusions if f.sm_timeline.file} == {"replays"}
    result = diff(live, replay)
    assert all(p.timing.verdict == "SAME" for p in result.pairs)
