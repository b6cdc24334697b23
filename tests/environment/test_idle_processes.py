"""Other processes on the GPU that NVML never saw at work (``rules_environment.seen_at_work``), on
pairs recorded on the H200 (tests/data/zoo_same_process, 2026-12-03): each replay ran while the
zoo's live process, waiting for it, still held its CUDA context. That setup finding used to take the
whole gap and rank first. A context that only waits is no evidence that it acted: the finding is
listed (``evidenced`` False) and the ledger gives it no share of the gap."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from fusiondiff.diff import diff
from fusiondiff.io.store import load_capture
from fusiondiff.records.model import Capture

SAME_PROCESS = Path(__file__).resolve().parents[1] / "data" / "zoo_same_process"


def _pair(scenario: str) -> tuple[Capture, Capture]:
    folder = SAME_PROCESS / scenario
    return load_capture(folder / "live.json"), load_capture(folder / "replay.json")


def _with_other_process_util(capture: Capture, util: float) -> Capture:
    """The capture with an NVML sample of its other processes' SM utilization (MODIFIED from the
    recording, which had none: the live process was waiting)."""
    fusions = []
    for f in capture.fusions:
        device = f.conditions.device
        others = tuple(dataclasses.replace(p, sm_util_max=util) for p in device.other_processes)
        assert others, "the recorded replay names the live process"
        conditions = dataclasses.replace(f.conditions, device=dataclasses.replace(device, other_processes=others))
        fusions.append(dataclasses.replace(f, conditions=conditions))
    return dataclasses.replace(capture, fusions=tuple(fusions))


def test_the_recorded_other_process_was_not_seen_at_work():
    _, replay = _pair("misaligned_input")
    device = replay.fusions[0].conditions.device
    assert device.other_process_count == 1
    assert all(p.sm_util_max is None for p in device.other_processes)
    assert [p.used_memory_bytes for p in device.other_processes] == [876 * 2**20]


def test_an_idle_process_beside_the_replay_yields_the_gap_to_the_storage_offset():
    result = diff(*_pair("misaligned_input"))
    ranked = [(f.rule, f.explained_ns) for f in result.findings]
    assert (
        ranked[0][0] == "storage_offset"
        and ranked[0][1] == result.pairs[0].timing.median_a_ns - result.pairs[0].timing.median_b_ns
    )
    idle = next(f for f in result.findings if f.rule == "other_processes")
    kernel = result.findings_of("kernel")
    assert not idle.evidenced and idle.explained_ns == 0.0 and idle == kernel[-1]
    assert [e.causes for e in result.ledger("kernel").entries] == [("storage_offset",)]
    # the kernel variant is the storage offset's evidence, not the host's (host time leads to no kernel)
    variant = next(f for f in result.findings if f.rule == "kernel_variant")
    assert variant.caused_by == (1,)


def test_a_process_seen_at_work_shares_the_gap_with_the_storage_offset():
    """Two root causes present for one fusion, neither following from the other: the data cannot
    tell their shares apart, so the ledger gives the gap to both jointly (it went to the one listed
    first in the rules before)."""
    live, replay = _pair("misaligned_input")
    result = diff(live, _with_other_process_util(replay, 0.4))
    gap = result.pairs[0].timing.median_a_ns - result.pairs[0].timing.median_b_ns
    assert [(e.causes, e.explained_ns) for e in result.ledger("kernel").entries] == [
        (("other_processes", "storage_offset"), gap)
    ]
    busy = next(f for f in result.findings if f.rule == "other_processes")
    offset = next(f for f in result.findings if f.rule == "storage_offset")
    assert busy.evidenced and busy.role == "setup" and busy.joint_with == ("storage_offset",)
    assert offset.explained_ns == busy.explained_ns == gap and offset.joint_with == ("other_processes",)


def test_an_idle_process_is_still_named_where_nothing_else_differs():
    """runtime_reuse's pair (SAME): the recorded difference (the live runtime's history) comes first,
    the idle process after it; neither explains time."""
    result = diff(*_pair("runtime_reuse"))
    rules = [f.rule for f in result.findings]
    assert rules.index("runtime_reuse") < rules.index("other_processes")
    assert result.pairs[0].timing.verdict == "SAME"
