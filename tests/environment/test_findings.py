"""The environment's findings on SYNTHETIC records (tests/synthetic.py: nothing here was recorded;
the recorded scenarios are tested in test_recorded.py): each rule fires on the one condition
planted, ranks first, words its side, and stays quiet on twin records."""

from __future__ import annotations

import dataclasses

import pytest

from fusiondiff.diff import diff
from fusiondiff.io.store import load_capture, save_capture
from fusiondiff.records.conditions import (
    DeviceActivity,
    GpuProcess,
    HostTiming,
    OtherKernel,
    OtherWork,
    TimingConditions,
)
from fusiondiff.records.model import Capture, FusionRecord
from fusiondiff.report.words import wording

import synthetic as syn

QUIET = DeviceActivity(
    window_ns=50e6, own_process_listed=True, processes_listed=1, sm_clock_mhz=1980, memory_clock_mhz=2619,
    clock_event_reasons=(0x1, 0x0, 0x1), violation_ns={"power": 0.0, "thermal": 0.0},
    applications_clock_mhz=1980, default_applications_clock_mhz=1980,
)  # fmt: skip
"""NVML's window of a quiet timing (SYNTHETIC)."""


def _fusion(
    median_ns: float, conditions: TimingConditions, clocks: tuple[int, ...] = (1980, 1980, 1980), **fields: object
) -> FusionRecord:
    kernel = syn.kernel(median_ns=median_ns)
    return syn.fusion(kernels=[kernel], conditions=conditions, sm_clock_mhz=clocks, **fields)


def _pair(a: FusionRecord, b: FusionRecord) -> tuple[Capture, Capture]:
    return syn.capture([a]), syn.capture([dataclasses.replace(b, name="fusion0", trace=None)], kind="replay")


def _quiet(median_ns: float = 176_000.0, **fields: object) -> FusionRecord:
    work = OtherWork(overlap_fractions=(0.0,) * 30)
    return _fusion(
        median_ns,
        TimingConditions(other_work=work, device=QUIET, host=HostTiming(execute_ns=(15_000.0,) * 4)),
        **fields,
    )


def _busy_stream() -> FusionRecord:
    gemm = OtherKernel(name="sm90_xmma_gemm_bf16bf16_bf16f32", stream=13, calls=45, overlap_ns=4.1e6)
    work = OtherWork(overlap_fractions=(0.8,) * 24 + (0.0,) * 6, kernels=(gemm,), copies=2, copy_overlap_ns=3000.0)
    device = dataclasses.replace(
        QUIET, sm_clock_mhz=1748, clock_event_reasons=(0x0, 0x4, 0x0), violation_ns={"power": 20e6}
    )
    return _fusion(
        246_000.0,
        TimingConditions(other_work=work, device=device, host=HostTiming(execute_ns=(15_000.0,) * 4)),
        clocks=(1980, 1748, 1755),
    )


def test_other_work_of_the_process_ranks_first_with_the_clock_drop_and_the_power_cap_as_its_evidence():
    result = diff(*_pair(_busy_stream(), _quiet()))
    rules = [f.rule for f in result.findings]
    # the clock that moved during A's samples is a mechanism of the other work now, not a weak measurement
    assert rules[0] == "other_work" and rules.index("gpu_throttled") > 0 and "clocks" in rules
    top = result.findings[0]
    assert top.role == "setup" and top.explained_ns == pytest.approx(
        result.pairs[0].timing.median_a_ns - result.pairs[0].timing.median_b_ns, rel=0.05
    )
    data = {e.field: e for e in top.data if e.subject is None}
    assert data["window_overlap"].a == pytest.approx(0.64) and data["window_overlap"].b == 0.0
    assert data["windows_overlapped"].a == pytest.approx(0.8) and data["sm_clock_mhz"].a == 1748.0
    title = wording.title(top)
    assert "other work of A's process overlapped 64.0 % of A's sampled windows" in title
    assert "45 kernel(s) on stream 13" in title and "the largest: sm90_xmma_gemm_bf16bf16_bf16f32" in title
    assert "SM clock 1748 MHz against 1980 MHz in B" in title
    # a gap counted once: the throttling and the clock lines that follow explain nothing more
    assert all(f.explained_ns == 0 for f in result.findings[1:])


def test_another_process_on_the_gpu_is_a_setup_finding_that_says_what_nvml_could_tell():
    busy = dataclasses.replace(
        QUIET, processes_listed=2, own_process_listed=False, other_process_count=1, gpu_util_samples=(1.0, 1.0)
    )
    live = _fusion(300_000.0, TimingConditions(device=busy, host=HostTiming(execute_ns=(15_000.0,))))
    result = diff(*_pair(live, _quiet()))
    top = result.findings[0]
    assert top.rule == "other_processes" and top.role == "setup"
    title = wording.title(top)
    assert "1 other process(es) had a context on A's GPU" in title
    assert "their utilization during the timing is not known" in title and "another namespace" in title
    told = dataclasses.replace(busy, own_process_listed=True, other_processes=(GpuProcess(4242, 2**32, 0.97),))
    result = diff(*_pair(_fusion(300_000.0, TimingConditions(device=told)), _quiet()))
    assert "97.0 % SM utilization at most" in wording.title(result.findings[0])
    assert any("4.00 GiB" in line for line in wording.evidence_lines(result.findings[0]))


def test_throttling_on_the_power_cap_is_not_a_locked_clock_and_not_an_idle_reading():
    capped = dataclasses.replace(
        QUIET, sm_clock_mhz=1500, clock_event_reasons=(0x0, 0x4, 0x4), violation_ns={"power": 25e6}
    )
    result = diff(*_pair(_fusion(210_000.0, TimingConditions(device=capped), clocks=(1500, 1500, 1500)), _quiet()))
    assert result.findings[0].rule == "gpu_throttled"
    title = wording.title(result.findings[0])
    assert (
        "the GPU throttled on its power cap during A's samples (power cap held the clocks back 50.0 % of the timing"
        in title
    )
    locked = dataclasses.replace(
        QUIET, sm_clock_mhz=1200, clock_event_reasons=(0x2, 0x2, 0x2), applications_clock_mhz=1200
    )
    result = diff(*_pair(_fusion(260_000.0, TimingConditions(device=locked), clocks=(1200, 1200, 1200)), _quiet()))
    assert result.findings[0].rule == "clocks_locked"
    assert (
        "A's clocks were held by a clock setting (applications clocks or a locked clock, 1200 MHz), not throttled"
        in wording.title(result.findings[0])
    )
    assert "gpu_throttled" not in [f.rule for f in result.findings]


def test_host_bound_calls_are_the_host_questions_and_leave_kernel_gaps_to_the_kernel_question():
    def tiny(host: HostTiming, median_ns: float, name: str) -> FusionRecord:
        return dataclasses.replace(_quiet(median_ns), name=name, conditions=TimingConditions(device=QUIET, host=host))

    # as many host samples as the protocol takes (40 calls and 4 warm-ups), and 25 of the session's
    # own calls: enough for the host question to be judged
    thunder = HostTiming(
        execute_ns=(14_000.0,) * 44, session_execute_ns=(16_000.0,) * 25, session_call_ns=(48_000.0,) * 25
    )
    replay = HostTiming(execute_ns=(14_000.0,) * 44)
    a = syn.capture([dataclasses.replace(tiny(thunder, 4_000.0, f"nvFusion{i}"), call_count=6) for i in range(3)])
    b = syn.capture(
        [dataclasses.replace(tiny(replay, 4_000.0 if i else 5_000.0, f"fusion{i}"), trace=None) for i in range(3)],
        kind="replay",
    )
    result = diff(a, b)
    (top,) = result.findings_of("host")
    assert top.rule == "host_bound" and top.role == "circumstance" and len(top.fusions) == 3
    # A waits 44 us per call, B 10 us: reported on the host question, counted in no gap
    assert top.explained_ns == 0 and result.findings[0].question == "kernel"
    assert {e.field: e for e in top.data}["gpu_wait_per_call_ns"].a == pytest.approx(3 * 44_000.0, rel=0.02)
    assert not result.passes("host") and result.exit_code(gates=("host",)) == 1
    title = wording.title(top)
    assert title.startswith(
        "3 fusions: A is host-bound in 3 fusion(s): a call takes 48.00 us on the host (Thunder's region call"
    )
    # a step is one call of each fusion: its 6 calls are 6 steps (the whole capture waits 6 times as long)
    waits = {e.field: e for e in top.data}["gpu_wait_step_ns"]
    assert waits.a == pytest.approx(3 * 44_000.0, rel=0.02) and waits.b == pytest.approx(3 * 10_000.0, rel=0.05)
    assert "the GPU waits 132.0 us per step in A, 29.02 us in B" in title
    # B's slower kernel of fusion0 keeps its own finding: host time explains no kernel gap
    unexplained = [f for f in result.findings if f.rule == "unexplained"]
    assert unexplained and unexplained[0].explained_ns > 0


def test_twin_quiet_records_give_no_environment_finding():
    result = diff(*_pair(_quiet(), _quiet()))
    assert not [
        f
        for f in result.findings
        if f.rule in {"host_bound", "other_work", "other_processes", "gpu_throttled", "clocks_locked"}
    ]
    assert result.exit_code() == 0


def test_a_side_without_conditions_is_not_compared_as_quiet():
    old = syn.fusion(kernels=[syn.kernel(median_ns=176_000.0)])  # written before issue #27
    result = diff(*_pair(old, _quiet()))
    assert result.findings == () and result.exit_code() == 0


def test_conditions_survive_the_store(tmp_path):
    capture = syn.capture([_busy_stream()])
    path = tmp_path / "live.json"
    save_capture(capture, path)
    assert load_capture(path) == capture
