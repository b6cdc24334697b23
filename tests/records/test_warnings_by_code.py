"""A capture's warnings by code (:mod:`fusiondiff.records.notes`), and a round trip's merged replay told by
its flag, or by its source in files written before the flag."""

from __future__ import annotations

import dataclasses

import pytest

from fusiondiff.diff import diff
from fusiondiff.records.distributed import COMMUNICATION_NOT_RECORDED
from fusiondiff.records.notes import from_roundtrip, note

import synthetic as syn


@pytest.mark.parametrize(
    "warning, code",
    [
        ("torch.profiler: CUPTI initialization failed; no kernel events recorded", "profiler_trouble"),
        ("the fusion launched no kernels (expression-evaluator segments only)", "profiler_trouble"),
        (f"{COMMUNICATION_NOT_RECORDED}: CUPTI is held by the nvfuser timer", "communication_not_recorded"),
        ("Thunder is not installed: fusions are named by execution order", "other"),
    ],
)
def test_a_warning_gets_its_code_once_in_one_place(warning, code):
    assert note(warning).code == code and note(warning).text == warning


def test_a_roundtrip_replay_is_told_by_its_flag_or_an_older_files_source():
    live = syn.capture([syn.fusion("nvFusion0")], source="synthetic: live")
    replay = syn.capture([syn.fusion("nvFusion0", kernels=[syn.kernel(seed=11)])], kind="replay", source="script.py")
    assert not from_roundtrip(replay) and not diff(live, replay).b_from_roundtrip
    flagged = dataclasses.replace(replay, roundtrip=True)
    older = dataclasses.replace(replay, source="roundtrip of live.json: 1 script(s)")
    assert from_roundtrip(flagged) and from_roundtrip(older)
    assert diff(live, flagged).b_from_roundtrip and diff(live, older).b_from_roundtrip
