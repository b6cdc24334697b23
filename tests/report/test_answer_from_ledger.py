"""Each question's line, pass/fail and gate read from that question's ledger, and each finding's
status set where the ledger is kept (fusiondiff.diff.ledger), on the recorded pairs the cases
were found on: the words never contradict the ledger below them."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest
from host_copies import with_host_samples

from fusiondiff.diff.core import diff
from fusiondiff.diff.ledger import credit, settle, status_of
from fusiondiff.diff.records import DiffResult, Finding
from fusiondiff.diff.rules_host import steps_recorded
from fusiondiff.io.store import load_capture
from fusiondiff.records.model import Capture
from fusiondiff.report.formats.diff_text import render_diff_text
from fusiondiff.report.words.questions import fidelity_line
from fusiondiff.report.words.report_words import explains_text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from inprocess import fusiondiff  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data"
OFFSET_4096 = (
    DATA / "h100" / "offset_thunderfx_4096" / "live.json",
    DATA / "h100" / "offset_thunderfx_4096" / "replay_nvfuser.json",
)
DEEP = (DATA / "roundtrip_deep" / "live.json.gz", DATA / "roundtrip_deep" / "replay_one_gpu.json")
HOST = (DATA / "environment" / "host" / "live.json", DATA / "environment" / "host" / "rt" / "replay.json")
SEED = (
    DATA.parents[1] / "fusiondiff" / "data" / "demo" / "seed_replay.json",
    DATA.parents[1] / "fusiondiff" / "data" / "demo" / "seed_live.json",
)


def _diff(a: Path, b: Path) -> DiffResult:
    return diff(load_capture(a), load_capture(b))


def _steps_times(capture: Capture, factor: int) -> Capture:
    """A copy whose every record was called ``factor`` times as often: ``factor`` times the steps."""
    return dataclasses.replace(
        capture, fusions=tuple(dataclasses.replace(f, call_count=f.call_count * factor) for f in capture.fusions)
    )


def test_per_step_is_the_capture_over_the_steps_it_recorded():
    """The host-bound decode step (6 steps, each of its 9 records called 6 times), on copies with
    enough host samples (tests/host_copies.py): the GPU's wait per step was the whole capture's, 6
    times a step's. A copy recording twice the steps (each call count doubled) waits as long per step."""
    live, replay = (with_host_samples(load_capture(p)) for p in HOST)
    assert steps_recorded(live.fusions) == 6 and steps_recorded(replay.fusions) == 1
    once, twice = diff(live, replay), diff(_steps_times(live, 2), replay)

    def waits(result: DiffResult) -> tuple[float, float]:
        (found,) = result.findings_of("host")
        step = {e.field: e for e in found.data}["gpu_wait_step_ns"]
        total = {e.field: e for e in result.host_times}["gpu_wait_step_ns"]
        assert step.a is not None and total.a is not None
        return float(step.a), float(total.a)

    assert waits(twice) == pytest.approx(waits(once))
    per_call = {e.field: e for e in once.findings_of("host")[0].data}["gpu_wait_per_call_ns"].a
    # one call of each of the 4 host-bound fusions a step: a step's wait is their sum, not 6 times it
    assert waits(once)[0] == pytest.approx(per_call)


def test_the_fidelity_gate_agrees_with_its_line_when_only_a_gap_is_unexplained():
    """roundtrip_deep: nvFusion3 is 0.42 us faster in B and nothing recorded explains it; every
    recorded property is the same. The fidelity line said "B runs what A ran" while --gate fidelity
    failed on the unexplained finding (a timing, not a property)."""
    result = _diff(*DEEP)
    assert [f.status for f in result.findings] == ["unexplained"]
    assert fidelity_line(result).startswith("B runs what A ran")
    assert result.outcome("fidelity") == "passes"
    assert result.exit_code(gates=("fidelity",)) == result.exit_code() == 1  # the kernel gap alone
    gated = fusiondiff("diff", *DEEP, "--gate", "fidelity")
    plain = fusiondiff("diff", *DEEP)
    assert gated.returncode == plain.returncode == 1
    assert "repro fidelity (fails" not in gated.stdout


def test_strict_on_the_demo_names_what_it_fails_on_or_passes():
    result = _diff(*SEED)
    run = fusiondiff("diff", "--strict", *SEED)
    line = fidelity_line(result)
    if run.returncode == 0:
        assert line.startswith("B runs what A ran") and "--strict gates" not in line
    else:  # what it fails on is named on the fidelity line
        assert "differently" in line or "--strict gates" in line
    assert result.passes("fidelity") == (run.returncode == 0) == line.startswith("B runs what A ran")


def test_a_joint_share_is_said_once_with_all_its_causes():
    """offset_thunderfx_4096 with nvFuser's own repro: storage offset and constant precision share
    the 3.62 us gap jointly; the line said "storage_offset (3.62 us of kernel time),
    constant_precision (3.62 us of kernel time)", the gap twice."""
    result = _diff(*OFFSET_4096)
    line = fidelity_line(result)
    assert "constant_precision and storage_offset jointly (3.62 us of kernel time)" in line
    assert line.count("3.62 us") == 1
    joint = [f for f in result.findings if f.status == "joint"]
    assert sorted(f.rule for f in joint) == ["constant_precision", "storage_offset"]
    assert all(f.alone_ns == 0 and f.explained_ns == pytest.approx(3615) for f in joint)
    assert [explains_text(f) for f in joint] == [
        "explains 3.62 us jointly with constant_precision",
        "explains 3.62 us jointly with storage_offset",
    ]
    assert {f.rule: f.status for f in result.findings if f.caused_by} == {
        "kernel_variant": "evidence",
        "cuda_source": "evidence",
    }


def test_a_share_part_alone_and_part_joint_says_both_parts():
    """The offset pair's findings credited again over a copy of its ledger's allocation in which the
    storage offset is alone for a second fusion (a derived case: no recording holds one): its
    explained time is its own 3.62 us plus the joint 3.62 us, and the words say which is which."""
    result = _diff(*OFFSET_4096)
    (pair,) = result.pairs
    other = dataclasses.replace(pair, label=pair.label + " (copy)")
    found = [
        dataclasses.replace(f, fusions=(*f.fusions, other.label)) if f.rule == "storage_offset" else f
        for f in result.findings
    ]
    allocation = {pair.label: ("constant_precision", "storage_offset"), other.label: ("storage_offset",)}
    credited = settle(credit(found, [pair, other], allocation), [pair, other])
    (offset,) = [f for f in credited if f.rule == "storage_offset"]
    assert offset.alone_ns == pytest.approx(3615) and offset.explained_ns == pytest.approx(7230)
    assert offset.status == "joint"
    assert explains_text(offset) == "explains 3.62 us alone and 3.62 us jointly with constant_precision"


def test_every_finding_has_the_status_its_ledger_set_and_an_old_record_gets_the_same():
    """The status is set by the ledger; a diff record written before it (status None) is given the
    same status from what it holds, so every format says the same thing either way."""
    for pair in (
        OFFSET_4096,
        DEEP,
        (DATA / "h100" / "offset_thunderfx" / "live.json", DATA / "h100" / "offset_thunderfx" / "replay_nvfuser.json"),
    ):
        result = _diff(*pair)
        for f in result.findings:
            assert f.status is not None
            older: Finding = dataclasses.replace(f, status=None)
            assert status_of(older) == f.status
            assert explains_text(older) == explains_text(f)
    same = _diff(
        DATA / "h100" / "offset_thunderfx" / "live.json", DATA / "h100" / "offset_thunderfx" / "replay_nvfuser.json"
    )
    # the same speed: storage offset and constant precision differ and cost no measurable time
    assert {f.rule: f.status for f in same.findings if not f.caused_by} == {
        "storage_offset": "no_time",
        "constant_precision": "no_time",
    }
    assert "explains no measurable time" in render_diff_text(same)
