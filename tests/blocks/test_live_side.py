"""``fusiondiff sm-timeline``: a capture's records given the timelines of their replays on its inputs."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import numpy as np

from fusiondiff.front import sm_timeline as live_side
from fusiondiff.io.store import load_capture
from fusiondiff.io.timelines import load_arrays
from tests.blocks.conftest import BLOCKS

OFFSET = BLOCKS.parent / "offset"


def test_a_record_gets_the_timeline_of_the_replay_that_ran_it():
    live = load_capture(OFFSET / "replay_nvfuser.json")
    replay = load_capture(BLOCKS / "same_kernel" / "a.json")
    attached = live_side.attach(live, replay)
    assert attached.fusions[0].sm_timeline == replay.fusions[0].sm_timeline
    assert attached.warnings[-1] == live_side.NOTE


def test_a_record_whose_inputs_no_replay_ran_gets_a_refusal():
    # the live fusion read a 2-byte aligned input; the replay's was 256-byte aligned
    attached = live_side.attach(load_capture(OFFSET / "live.json"), load_capture(BLOCKS / "seed" / "replay.json"))
    timeline = attached.fusions[0].sm_timeline
    assert timeline.refusal.code == "failed" and "no replay of this fusion ran on its inputs" in timeline.refusal.detail


def test_a_replay_that_launched_other_kernels_gives_no_timeline():
    replay = load_capture(BLOCKS / "same_kernel" / "a.json")
    kernel = replay.fusions[0].kernels[0]
    other = dataclasses.replace(kernel, launch=dataclasses.replace(kernel.launch, block=(256, 1, 1)))  # SYNTHETIC
    replay = dataclasses.replace(replay, fusions=(dataclasses.replace(replay.fusions[0], kernels=(other,)),))
    timeline = live_side.attach(load_capture(OFFSET / "replay_nvfuser.json"), replay).fusions[0].sm_timeline
    assert timeline.refusal.code == "launch_differs" and not timeline.measured


def test_the_command_writes_the_capture_with_its_timelines_and_their_arrays_beside_it(tmp_path, monkeypatch):
    live = tmp_path / "live.json"
    shutil.copy(OFFSET / "replay_nvfuser.json", live)

    def replayed_on_the_h200(scripts, *, output, inputs_capture, options, **_):
        # the replay itself needs a GPU: this one hands back a recording of that replay
        assert inputs_capture == str(live) and options.sm_timeline == 3 and len(scripts) == 1
        shutil.copy(BLOCKS / "same_kernel" / "a.json", output)
        shutil.copy(BLOCKS / "same_kernel" / "a.timeline.safetensors", Path(output).parent / "a.timeline.safetensors")
        return Path(output)

    monkeypatch.setattr("fusiondiff.replay.runner.replay_scripts", replayed_on_the_h200)
    out = live_side.record_live_side(live, tmp_path / "out" / "live_blocks.json", 3, 0.25)
    written = load_capture(out)
    assert written.fusions[0].sm_timeline.file == "live_blocks.timeline.safetensors"
    arrays = load_arrays(out, written)[(0, 0)]
    expected = load_arrays(BLOCKS / "same_kernel" / "a.json", load_capture(BLOCKS / "same_kernel" / "a.json"))[(0, 0)]
    assert np.array_equal(arrays.end_ns, expected.end_ns)
