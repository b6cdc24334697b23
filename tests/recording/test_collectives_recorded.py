"""The session's collectives recorded apart from fusion time (issue #17): aggregation, the capture
field and its checks, the trace's refusals and failures, and the reports.

No GPU and no process group here. Every communication kernel in this file is SYNTHETIC: events
made up in code (names as NCCL gives them, durations invented), or, in one test, CPU ranges that
torch.profiler records under an NCCL kernel's name so that its real event API is read. The
captures they are attached to were recorded on an H200 (tests/data/fidelity), not under torchrun.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from fusiondiff.diff.ranks import RankCapture, diff_ranks
from fusiondiff.front import live
from fusiondiff.front.cli import _recording_options, _split_script_args, build_parser, main
from fusiondiff.io.store import dumps_capture, load_capture, write_capture
from fusiondiff.recording import communication, cupti_owner
from fusiondiff.recording.communication import (
    CommunicationTrace,
    communication_kernels,
    communication_trace,
    read_communication,
)
from fusiondiff.recording.timing import KernelEvent
from fusiondiff.records import codec
from fusiondiff.records.errors import CaptureFormatError
from fusiondiff.records.model import Capture, CommunicationKernel, LaunchConfig
from fusiondiff.records.options import RecordingOptions
from fusiondiff.report.formats.ranks_text import render_ranks_text
from fusiondiff.report.text import render_capture_text

PYTHIA = Path(__file__).parent.parent / "data" / "fidelity" / "pythia" / "live.json"
ALL_REDUCE = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"
ALL_GATHER = "ncclDevKernel_AllGather_RING_LL"
ARGS = "(ncclDevKernelArgsStorage<4096ul>)"


def _event(name: str, start_ns: float, duration_ns: float, stream: int | None = 13, grid: Any = None) -> KernelEvent:
    """SYNTHETIC kernel event."""
    launch = LaunchConfig(grid=grid, block=None if grid is None else (640, 1, 1))
    return KernelEvent(name=name, start_ns=start_ns, duration_ns=duration_ns, launch=launch, stream=stream)


def _kernel(name: str = ALL_REDUCE, durations: tuple[float, ...] = (1000.0, 3000.0), calls: int | None = None):
    """SYNTHETIC communication record."""
    return CommunicationKernel(
        name=name,
        calls=len(durations) if calls is None else calls,
        samples_ns=durations,
        total_ns=sum(durations),
        stream=13,
        launch=LaunchConfig(grid=(2, 1, 1), block=(640, 1, 1)),
    )


@pytest.fixture
def recorded() -> Capture:
    return load_capture(PYTHIA)


@pytest.fixture
def ranked(monkeypatch):
    """This process as rank 0 of 2 under torchrun, with a clean CUPTI ledger."""
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("LOCAL_RANK", "0")
    cupti_owner.reset_for_tests()
    yield
    cupti_owner.reset_for_tests()


# --------------------------------------------------------------------------------------------
# Aggregation


def test_communication_kernels_are_aggregated_per_short_name_and_fusion_kernels_ignored() -> None:
    events = [
        _event(ALL_REDUCE + ARGS, 300.0, 5000.0),  # out of start order: sorted before keeping samples
        _event("nvf::nvfuser_pointwise_f0_c1_r0_g0(nvf::Tensor<float, 1, 1>)", 50.0, 999.0, stream=7),
        _event(ALL_REDUCE + ARGS, 100.0, 2000.0, grid=(2, 1, 1)),
        _event(ALL_GATHER + ARGS, 200.0, 700.0, stream=21),
        _event(ALL_REDUCE + ARGS, 200.0, 4000.0),
    ]
    kernels = communication_kernels(events)
    assert [k.name for k in kernels] == [ALL_GATHER, ALL_REDUCE]
    gather, reduce = kernels
    assert reduce.calls == 3 and reduce.samples_ns == (2000.0, 4000.0, 5000.0) and reduce.total_ns == 11000.0
    assert reduce.stream == 13 and reduce.launch == LaunchConfig(grid=(2, 1, 1), block=(640, 1, 1))
    assert reduce.median_ns == 4000.0
    assert gather.calls == 1 and gather.stream == 21 and gather.launch is None  # the first call gave no launch


def test_samples_are_capped_but_calls_and_total_count_every_call() -> None:
    events = [_event(ALL_REDUCE, float(i), 10.0) for i in range(25)]
    (kernel,) = communication_kernels(events, max_samples=10)
    assert kernel.calls == 25 and len(kernel.samples_ns) == 10 and kernel.total_ns == 250.0


def test_events_are_read_from_an_exported_trace() -> None:
    trace = {
        "traceEvents": [
            {
                "cat": "kernel",
                "name": ALL_REDUCE + ARGS,
                "ts": 10.0,
                "dur": 41.5,
                "args": {"stream": 13, "grid": [2, 1, 1], "block": [640, 1, 1]},
            },
            {"cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 9.0, "dur": 1.0, "args": {}},
            {"cat": "kernel", "name": "nvfuser_pointwise_f0_c1_r0_g0", "ts": 60.0, "dur": 3.0, "args": {}},
        ]
    }
    (kernel,) = communication_kernels(communication._events_of_trace(trace))
    assert kernel.name == ALL_REDUCE and kernel.samples_ns == (41500.0,) and kernel.stream == 13
    assert kernel.launch is not None and kernel.launch.grid == (2, 1, 1)


def test_events_are_read_through_torch_profilers_own_event_api() -> None:
    """SYNTHETIC: CPU ranges named like an NCCL kernel, recorded by a real torch.profiler on this
    CPU machine, so that Kineto's event objects (name, start_ns, duration_ns, device_resource_id,
    metadata_json) are read as they are, not through a fake."""
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile, record_function

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(3):
            with record_function(ALL_REDUCE + ARGS):
                torch.ones(8).sum()
        with record_function("nvfuser_pointwise_f0_c1_r0_g0"):
            pass
    (kernel,) = read_communication(prof)
    assert kernel.name == ALL_REDUCE and kernel.calls == 3 and len(kernel.samples_ns) == 3
    assert kernel.total_ns == pytest.approx(sum(kernel.samples_ns)) and kernel.total_ns > 0
    assert kernel.launch is None  # a CPU range has no grid: not invented


# --------------------------------------------------------------------------------------------
# The capture field: JSON, old files, impossible values


def test_a_capture_with_communication_round_trips_from_bytes_and_parsed_json(recorded: Capture, tmp_path: Path) -> None:
    capture = dataclasses.replace(recorded, communication=(_kernel(), _kernel(ALL_GATHER, (700.0,), calls=4)))
    path = tmp_path / "live.rank0.json"
    write_capture(capture, path)
    assert load_capture(path).communication == capture.communication
    data = json.loads(path.read_text())
    assert codec.capture_from_jsonable(data) == codec.decode_capture_bytes(path.read_bytes())
    assert codec.capture_from_jsonable(data).communication == capture.communication


def test_a_capture_written_before_the_field_loads_with_none(recorded: Capture) -> None:
    assert "communication" not in json.loads(PYTHIA.read_text())
    assert recorded.communication == ()
    assert recorded.communication_ns == 0.0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda k: k.__setitem__("calls", 1),
            "live.json.communication[0]: 2 samples for 1 call(s): calls counts every sample",
        ),
        (
            lambda k: k["samples_ns"].__setitem__(1, -3.0),
            "live.json.communication[0].samples_ns[1]: -3.0 is not a duration",
        ),
        (lambda k: k.__setitem__("total_ns", None), "live.json.communication[0].total_ns: null is not a duration"),
        (
            lambda k: k.__setitem__("total_ns", 10.0),
            "live.json.communication[0]: total_ns 10.0 is below the sum of its samples (4000.0)",
        ),
        (lambda k: k.__setitem__("calls", 0), "live.json.communication[0].calls: 0 is not a positive count"),
        (lambda k: k.__setitem__("stream", -1), "live.json.communication[0].stream: -1 is negative"),
    ],
)
def test_impossible_communication_values_are_refused_in_one_line(recorded: Capture, change, message: str) -> None:
    data = codec.to_jsonable(dataclasses.replace(recorded, communication=(_kernel(),)))
    change(data["communication"][0])
    assert codec.decode_capture_bytes(json.dumps(data).encode()) is None
    with pytest.raises(CaptureFormatError) as raised:
        codec.capture_from_jsonable(data, "live.json")
    assert str(raised.value) == message


# --------------------------------------------------------------------------------------------
# The trace around the capture block


def _no_start() -> Any:
    raise AssertionError("the profiler must not start here")


def test_the_trace_is_a_no_op_outside_torchrun(monkeypatch) -> None:
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(communication, "_start", _no_start)
    with communication_trace(True) as trace:
        assert not trace.active
    assert trace == CommunicationTrace()


def test_the_trace_is_off_when_not_asked(ranked, monkeypatch) -> None:
    monkeypatch.setattr(communication, "_start", _no_start)
    with communication_trace(False) as trace:
        pass
    assert trace == CommunicationTrace()


def test_under_the_nvfuser_timer_the_trace_does_not_start_and_says_why(ranked, monkeypatch) -> None:
    monkeypatch.setattr(communication, "_start", _no_start)
    with communication_trace(True, timer="nvfuser") as trace:
        pass
    assert trace.kernels == () and trace.warning is not None
    assert trace.warning.startswith("communication kernels not recorded: --timer nvfuser")
    assert cupti_owner.holder() is None, "nothing claimed CUPTI"


def test_where_nvfusers_profiler_holds_cupti_the_trace_does_not_start(ranked, monkeypatch) -> None:
    monkeypatch.setattr(communication, "_start", _no_start)
    cupti_owner.note(cupti_owner.NVFUSER_PROFILER)
    with communication_trace(True) as trace:
        pass
    assert trace.warning is not None and "PythonProfiler holds CUPTI" in trace.warning


def test_a_profiler_that_fails_to_start_is_one_warning_and_the_block_runs(ranked, monkeypatch) -> None:
    def refuse() -> Any:
        raise RuntimeError("Profiler is already enabled on this thread\nmore lines")

    monkeypatch.setattr(communication, "_start", refuse)
    ran = []
    with communication_trace(True) as trace:
        ran.append(True)
    assert ran == [True]
    assert trace.warning == (
        "communication kernels not recorded: torch.profiler did not start "
        "(RuntimeError: Profiler is already enabled on this thread)"
    )


def test_on_this_cpu_machine_the_real_start_fails_and_is_one_warning(ranked) -> None:
    pytest.importorskip("torch")
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present: the start does not fail here")
    with pytest.warns(UserWarning), communication_trace(True) as trace:
        pass
    assert trace.warning is not None and trace.warning.startswith("communication kernels not recorded: ")
    assert not cupti_owner.torch_profiler_active()


class _FakeProfile:
    """Stands in for torch.profiler.profile (its ``profiler`` holds torch's ``use_device``)."""

    def __init__(self) -> None:
        self.profiler = type("Inner", (), {"use_device": "cuda", "kineto_results": None})()
        self.stopped_with_device: list[object] = []

    def stop(self) -> None:
        self.stopped_with_device.append(self.profiler.use_device)

    def export_chrome_trace(self, path: str) -> None:
        event = {"cat": "kernel", "name": ALL_REDUCE + ARGS, "ts": 1.0, "dur": 2.0, "args": {"stream": 13}}
        Path(path).write_text(json.dumps({"traceEvents": [event]}))


def test_the_profiler_is_stopped_and_read_when_the_block_ends(ranked, monkeypatch) -> None:
    fake = _FakeProfile()
    monkeypatch.setattr(communication, "_start", lambda: fake)
    with communication_trace(True) as trace:
        assert trace.active
    assert not trace.active and fake.stopped_with_device == ["cuda"]
    assert [(k.name, k.calls, k.total_ns) for k in trace.kernels] == [(ALL_REDUCE, 1, 2000.0)]
    assert trace.warning is None


@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError])
def test_the_profiler_is_stopped_without_a_device_wide_wait_when_the_block_raises(ranked, monkeypatch, error) -> None:
    fake = _FakeProfile()
    monkeypatch.setattr(communication, "_start", lambda: fake)
    with pytest.raises(error), communication_trace(True):
        raise error()
    assert fake.stopped_with_device == [None], "stopped once, with torch's synchronize skipped"


def test_a_trace_that_cannot_be_read_is_one_warning(ranked, monkeypatch) -> None:
    fake = _FakeProfile()
    fake.export_chrome_trace = lambda path: (_ for _ in ()).throw(OSError("disk full"))  # type: ignore[method-assign]
    monkeypatch.setattr(communication, "_start", lambda: fake)
    with communication_trace(True) as trace:
        pass
    assert (
        trace.warning
        == "communication kernels not recorded: the profiler's events could not be read (OSError: disk full)"
    )


def test_the_capture_takes_the_kernels_and_the_warning(recorded: Capture) -> None:
    assert live.with_communication(recorded, CommunicationTrace()) is recorded
    trace = CommunicationTrace(kernels=(_kernel(),), warning=None)
    assert live.with_communication(recorded, trace).communication == (_kernel(),)
    refused = live.with_communication(recorded, CommunicationTrace(warning="communication kernels not recorded: x"))
    assert refused.warnings[-1] == "communication kernels not recorded: x" and refused.communication == ()


def test_no_communication_reaches_the_options_and_survives_their_json() -> None:
    for argv in (["train.py", "-o", "live.json", "--no-communication"], ["--no-communication", "train.py", "-o", "x"]):
        args = build_parser().parse_args(["capture", *argv])
        _split_script_args(args)  # as `fusiondiff capture` does: options after SCRIPT are taken back
        options = _recording_options(args)
        assert options.communication is False and args.args == []
    assert RecordingOptions.from_jsonable(options.to_jsonable()) == options
    default = _recording_options(build_parser().parse_args(["capture", "train.py", "-o", "live.json"]))
    assert default.communication is True


# --------------------------------------------------------------------------------------------
# Reports


def test_show_prints_the_communication_table_and_both_totals(recorded: Capture) -> None:
    capture = dataclasses.replace(recorded, communication=(_kernel(), _kernel(ALL_GATHER, (700.0,), calls=4)))
    text = render_capture_text(capture)
    lines = text.splitlines()
    start = lines.index("  communication kernels (kept apart from fusion time)")
    assert lines[start + 1].split() == ["name", "calls", "median", "us", "total", "us"]
    assert lines[start + 2].split() == [ALL_REDUCE, "2", "2.00", "4.00"]  # largest total first
    assert lines[start + 3].split() == [ALL_GATHER, "4", "0.70", "0.70"]
    fusion_us = f"{capture.fusion_time_ns / 1000:.1f}"  # 585.09 us: 4 significant digits
    assert lines[start + 4].startswith(f"  in the capture block: fusions {fusion_us} us ")
    assert "communication 4.70 us" in lines[start + 4]
    assert "communication kernels" not in render_capture_text(recorded)


def test_show_json_holds_the_communication_records(recorded: Capture, tmp_path: Path, capsys) -> None:
    path = tmp_path / "live.json"
    write_capture(dataclasses.replace(recorded, communication=(_kernel(),)), path)
    assert main(["show", str(path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["communication"][0]["name"] == ALL_REDUCE


def _ranks(recorded: Capture, kernels_0: tuple, kernels_1: tuple) -> list[RankCapture]:
    out = []
    for rank, kernels in ((0, kernels_0), (1, kernels_1)):
        environment = dataclasses.replace(recorded.environment, rank=rank, world_size=2)
        capture = dataclasses.replace(recorded, environment=environment, communication=kernels)
        out.append(RankCapture(rank=rank, path=f"live.rank{rank}.json", capture=capture))
    return out


def test_ranks_sets_the_collectives_side_by_side_and_names_the_imbalance(recorded: Capture) -> None:
    """SYNTHETIC: rank 0 spends 4x longer in its all-reduce than rank 1 (it waits for rank 1)."""
    result = diff_ranks(_ranks(recorded, (_kernel(durations=(4000.0, 4000.0)),), (_kernel(),)))
    assert [c.total_ns for c in result.communication] == [8000.0, 4000.0]
    imbalance = result.communication_imbalance
    assert imbalance is not None and (imbalance.most_rank, imbalance.least_rank) == (0, 1)
    assert imbalance.spread == 0.5
    text = render_ranks_text(result)
    assert "communication kernels per rank (kept apart from fusion time): calls, and their total time" in text
    header = next(line for line in text.splitlines() if line.strip().startswith("name "))
    assert header.split() == ["name", "rank", "0", "calls", "rank", "0", "total", "us", "rank", "1", "calls"] + [
        "rank",
        "1",
        "total",
        "us",
    ]
    row = next(line for line in text.splitlines() if line.strip().startswith(ALL_REDUCE))
    assert row.split() == [ALL_REDUCE, "2", "8.0", "2", "4.0"]  # one unit with the fusion time (585.09 us)
    assert "time in collectives differs by 50 %: rank 0 8.00 us, rank 1 4.00 us" in text
    assert "rank 0, which waits longest, is usually not the straggler" in text


def test_ranks_within_ten_percent_are_not_an_imbalance_and_old_files_show_no_section(recorded: Capture) -> None:
    close = diff_ranks(_ranks(recorded, (_kernel(durations=(1000.0, 3200.0)),), (_kernel(),)))
    assert close.communication_imbalance is None
    assert "time in collectives differs" not in render_ranks_text(close)
    none = diff_ranks(_ranks(recorded, (), ()))
    assert none.communication_imbalance is None
    assert "communication kernels per rank" not in render_ranks_text(none)
    one = render_ranks_text(diff_ranks(_ranks(recorded, (_kernel(),), ())))
    assert "not recorded" in one and "time in collectives differs" not in one


def test_the_not_recorded_warning_is_not_a_measurement_finding(recorded: Capture) -> None:
    from fusiondiff.diff import diff

    warned = dataclasses.replace(
        recorded, warnings=("communication kernels not recorded: --timer nvfuser uses nvFuser's PythonProfiler",)
    )
    result = diff(warned, recorded)
    assert not any(f.rule == "measurement" for f in result.findings)
    assert dumps_capture(warned)  # still a writable capture


class _Results:
    """SYNTHETIC Kineto results holding no communication kernel."""

    def events(self) -> list[Any]:
        return []


@pytest.mark.parametrize(("backend", "exported"), [("nccl", True), ("gloo", False), (None, False)])
def test_none_found_under_nccl_is_checked_in_the_exported_trace(monkeypatch, backend, exported: bool) -> None:
    fake = _FakeProfile()
    fake.profiler.kineto_results = _Results()
    monkeypatch.setattr(communication.distributed, "process_group_backend", lambda: backend)
    kernels = read_communication(fake)
    assert [k.name for k in kernels] == ([ALL_REDUCE] if exported else [])
