"""The recording side of issue #27 without a GPU: other work read from written Kineto traces, NVML
read through a fake module, host times with a fake clock. Every trace, NVML answer and clock here
is written in the test (nothing claims to be recorded)."""

from __future__ import annotations

import dataclasses
import json
import types
from typing import Any

import pytest

from fusiondiff.io.store import load_capture, save_capture
from fusiondiff.recording import device_watch as dw
from fusiondiff.recording.gpu_activity import other_work, sample_windows, with_other_work
from fusiondiff.recording.host_time import SessionHostTimes, WarmupClock
from fusiondiff.recording.timing import KernelEvent, SampledRun
from fusiondiff.records.conditions import HostTiming, OtherWork, TimingConditions
from fusiondiff.records.errors import CaptureFormatError
from fusiondiff.records.model import LaunchConfig

import synthetic as syn

LAUNCH = LaunchConfig(grid=(1, 1, 1), block=(128, 1, 1))


def _kernel(
    ts_us: float, dur_us: float, corr: int, name: str = "nvfuser_pointwise_f0_c1_r0_g0", stream: int = 7
) -> dict[str, Any]:
    return {"cat": "kernel", "name": name, "ts": ts_us, "dur": dur_us, "args": {"correlation": corr, "stream": stream}}


def _launch(ts_us: float, corr: int, tid: int) -> dict[str, Any]:
    return {
        "cat": "cuda_runtime",
        "name": "cudaLaunchKernel",
        "ts": ts_us,
        "dur": 1,
        "tid": tid,
        "args": {"correlation": corr},
    }


def _trace() -> tuple[dict[str, Any], list[list[KernelEvent]]]:
    """Two samples on thread 1 (windows 100-110 us and 200-210 us); thread 2 runs a gemm over
    105-115 us (half of the first window), a second gemm inside the second window (202-204 us), and a
    memcpy over 206-208 us; one kernel of thread 2 ends before any window."""
    events = [
        {"cat": "user_annotation", "name": "fusiondiff/sample/0", "ts": 99, "dur": 2, "tid": 1},
        {"cat": "user_annotation", "name": "fusiondiff/sample/1", "ts": 199, "dur": 2, "tid": 1},
        _launch(99.5, 10, 1),
        _kernel(100, 10, 10),
        _launch(199.5, 11, 1),
        _kernel(200, 10, 11),
        _launch(50, 20, 2),
        _kernel(105, 10, 20, name="sm90_gemm_bf16(int)", stream=13),
        _launch(51, 21, 2),
        _kernel(202, 2, 21, name="sm90_gemm_bf16(int)", stream=13),
        _launch(52, 22, 2),
        {"cat": "gpu_memcpy", "name": "Memcpy HtoD", "ts": 206, "dur": 2, "args": {"correlation": 22}},
        _launch(1, 23, 2),
        _kernel(2, 5, 23, name="early", stream=13),
    ]
    samples = [
        [KernelEvent("nvfuser_pointwise_f0_c1_r0_g0", 100_000.0, 10_000.0, LAUNCH, 7)],
        [KernelEvent("nvfuser_pointwise_f0_c1_r0_g0", 200_000.0, 10_000.0, LAUNCH, 7)],
    ]
    return {"traceEvents": events}, samples


def test_other_threads_kernels_and_copies_overlapping_the_windows_are_other_work():
    trace, samples = _trace()
    work = other_work(trace, samples)
    assert work.overlap_fractions == pytest.approx((0.5, 0.4))  # 5 of 10 us; 2 + 2 of 10 us
    assert work.windows_overlapped == 2 and work.mean_fraction == pytest.approx(0.45)
    (gemm,) = work.kernels  # "early" overlapped nothing
    assert (gemm.name, gemm.stream, gemm.calls) == ("sm90_gemm_bf16", 13, 2)
    assert gemm.overlap_ns == pytest.approx(7000.0)
    assert (work.copies, work.copy_overlap_ns) == (1, pytest.approx(2000.0))
    assert work.streams == (13,)


def test_a_quiet_trace_has_no_other_work_and_windows_follow_the_kernels():
    trace, samples = _trace()
    quiet = {
        "traceEvents": [
            e for e in trace["traceEvents"] if e.get("tid", 1) == 1 and e.get("args", {}).get("correlation", 10) < 20
        ]
    }
    work = other_work(quiet, samples)
    assert work.overlap_fractions == (0.0, 0.0) and work.kernels == () and work.copies == 0
    assert sample_windows([[], samples[0]]) == [None, (100_000.0, 110_000.0)]


def test_a_trace_it_cannot_read_leaves_other_work_unknown_with_a_warning():
    run = SampledRun(samples=((),))
    broken = with_other_work(run, {"traceEvents": [{"cat": "kernel", "ts": "x", "args": {}}]})
    assert broken.other_work is None and broken.warnings[0].startswith("other work on the GPU not read")


class _FakeNvml:
    """A fake ``pynvml``: its answers are fields the test sets."""

    NVML_CLOCK_SM, NVML_CLOCK_MEM = 0, 2
    NVML_PERF_POLICY_POWER, NVML_PERF_POLICY_THERMAL = 0, 1
    NVML_GPU_UTILIZATION_SAMPLES, NVML_PROCESSOR_CLK_SAMPLES = 1, 5

    class NVMLError_NotFound(Exception):  # noqa: N801 - pynvml's name
        pass

    def __init__(self) -> None:
        self.clocks = iter([1980, 1748, 1755])
        self.reasons = iter([0x1, 0x4, 0x0])
        self.power = iter([1_000_000.0, 31_000_000.0])  # ns held by the power cap: 30 ms in the window
        self.energy = iter([5000.0, 5600.0])
        self.processes = [
            types.SimpleNamespace(pid=10, usedGpuMemory=2**30),
            types.SimpleNamespace(pid=99, usedGpuMemory=None),
        ]

    def nvmlDeviceGetClockInfo(self, handle: Any, which: int) -> int:  # noqa: N802 - pynvml's names
        return next(self.clocks) if which == self.NVML_CLOCK_SM else 2619

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: Any) -> int:  # noqa: N802
        return next(self.reasons)

    def nvmlDeviceGetViolationStatus(self, handle: Any, policy: int) -> Any:  # noqa: N802
        if policy == self.NVML_PERF_POLICY_THERMAL:
            raise RuntimeError("NVMLError_NotSupported")
        return types.SimpleNamespace(violationTime=next(self.power))

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: Any) -> float:  # noqa: N802
        return next(self.energy)

    def nvmlDeviceGetComputeRunningProcesses(self, handle: Any) -> list[Any]:  # noqa: N802
        return self.processes

    def nvmlDeviceGetProcessUtilization(self, handle: Any, since: int) -> list[Any]:  # noqa: N802
        return [
            types.SimpleNamespace(pid=10, smUtil=87, timeStamp=since + 5),
            types.SimpleNamespace(pid=10, smUtil=99, timeStamp=since - 5),
        ]

    def nvmlDeviceGetSamples(self, handle: Any, kind: int, since: int) -> tuple[int, list[Any]]:  # noqa: N802
        if kind == self.NVML_PROCESSOR_CLK_SAMPLES:
            raise self.NVMLError_NotFound()
        value = types.SimpleNamespace(uiVal=64)
        return 1, [types.SimpleNamespace(timeStamp=since + 1, sampleValue=value)]

    def nvmlDeviceGetApplicationsClock(self, handle: Any, which: int) -> int:  # noqa: N802
        return 1980

    def nvmlDeviceGetDefaultApplicationsClock(self, handle: Any, which: int) -> int:  # noqa: N802
        return 1980


def test_the_watch_reads_reasons_beside_each_clock_reading_and_counters_around_the_window():
    fake = _FakeNvml()
    wall = iter([1_000_000_000, 1_100_000_000])  # a 100 ms window
    watch = dw.DeviceWatch(0, opened=(fake, "handle"), wall_ns=lambda: next(wall), own_pid=99)
    assert [watch.read_clock() for _ in range(3)] == [1980, 1748, 1755]  # what the protocol stores, as before
    d = watch.finish()
    assert d is not None
    assert d.window_ns == 100e6 and d.clock_event_reasons == (0x1, 0x4, 0x0) and d.reasons_while_running == 0x4
    assert (d.sm_clock_mhz, d.memory_clock_mhz) == (1748, 2619)
    assert d.violation_ns == {"power": 30e6} and "violation_status.thermal" in d.unavailable
    assert d.energy_mj == 600.0 and d.gpu_util_samples == (0.64,) and d.sm_clock_samples_mhz == ()
    assert d.own_process_listed and d.processes_listed == 2 and d.other_process_count == 1
    (other,) = d.other_processes
    assert (other.pid, other.used_memory_bytes, other.sm_util_max) == (
        10,
        2**30,
        0.87,
    )  # the sample before the window left out


def test_a_round_trips_idle_spares_are_kept_apart_from_other_processes(monkeypatch, tmp_path):
    """Replays started ahead hold a context on the GPU while one samples: they are not other work."""
    monkeypatch.setattr(dw, "round_trip_spares", lambda pids: {10})
    fake = _FakeNvml()
    watch = dw.DeviceWatch(0, opened=(fake, "handle"), own_pid=99)
    for _ in range(3):
        watch.read_clock()
    d = watch.finish()
    assert d is not None and d.other_process_count == 0 and d.other_processes == ()
    assert [p.pid for p in d.spare_replays] == [10]


def test_spares_are_found_by_their_round_trips_token(monkeypatch, tmp_path):
    from fusiondiff.recording.device_watch import TOKEN_ENV

    for pid, environ in ((10, f"A=1\0{TOKEN_ENV}=run-1\0"), (11, f"{TOKEN_ENV}=run-2\0"), (12, "B=2\0")):
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "environ").write_bytes(environ.encode())
    monkeypatch.setenv(TOKEN_ENV, "run-1")
    assert dw.round_trip_spares([10, 11, 12, 13], proc=tmp_path) == {10}
    monkeypatch.delenv(TOKEN_ENV)
    assert dw.round_trip_spares([10, 11, 12], proc=tmp_path) == set()  # outside a round trip


def test_where_nvml_lists_other_pids_only_their_number_is_kept():
    fake = _FakeNvml()
    watch = dw.DeviceWatch(0, opened=(fake, "handle"), own_pid=12345)  # another PID namespace
    for _ in range(3):
        watch.read_clock()
    d = watch.finish()
    assert d is not None and not d.own_process_listed
    assert d.other_process_count == 1 and d.other_processes == ()


def test_without_nvml_nothing_is_recorded_and_the_capture_says_so_once():
    watch = dw.DeviceWatch(0, opened="nvidia-ml-py is not installed (pip install nvidia-ml-py)")
    assert watch.read_clock() is None and watch.finish() is None
    warnings: list[str] = []
    run = SampledRun(samples=())
    for _ in range(2):
        conditions = dw.timing_conditions(run, watch, WarmupClock(lambda: None, 0), warnings)
    assert warnings == [dw.missing_line("nvidia-ml-py is not installed (pip install nvidia-ml-py)")]
    assert conditions.device is None and conditions.other_work is None
    assert "profiler" not in warnings[0] and "kernel" not in warnings[0]  # not read as profiler trouble


@dataclasses.dataclass(frozen=True)
class Record:
    """Stands for a ``FusionRecord``: the one field host times go into."""

    conditions: TimingConditions | None


class _Clock:
    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now


def test_warm_ups_are_timed_on_the_host_and_samples_are_not():
    clock = _Clock()

    def run_once() -> None:
        clock.now += 1000

    timed = WarmupClock(run_once, warmups=3, clock=clock)
    for _ in range(5):
        timed()
    assert timed.host_ns == [1000.0, 1000.0, 1000.0] and timed.after_first == (1000.0, 1000.0)


def test_a_region_call_counts_its_host_time_less_fusiondiffs_work_for_repeats_only():
    clock = _Clock()
    host = SessionHostTimes(clock=clock)
    for repeat in (False, True, True):
        with host.region():
            clock.now += 30_000  # Thunder's wrapper and descriptors
            host.execute("key", repeat, host_ns=12_000.0, own_ns=5_000.0)
            clock.now += 17_000  # fd.execute (12 us) and fusiondiff's work (5 us)
    updated = host.with_host_times(Record(TimingConditions(host=HostTiming(execute_ns=(9000.0,)))), "key")
    assert updated.conditions.host.session_call_ns == (42_000.0, 42_000.0)
    assert updated.conditions.host.session_execute_ns == (12_000.0, 12_000.0)
    assert updated.conditions.host.execute_ns == (9000.0,)
    assert updated.conditions.host.per_call_ns == 42_000.0 and updated.conditions.host.kind == "thunder_call"
    assert host.with_host_times(Record(None), "other") == Record(None)


def test_a_region_that_raises_records_nothing():
    clock = _Clock()
    host = SessionHostTimes(clock=clock)
    with pytest.raises(ValueError), host.region():
        host.execute("key", True, 1.0, 0.0)
        raise ValueError
    host_timing = host.with_host_times(Record(None), "key").conditions.host
    assert host_timing.session_call_ns == () and host_timing.session_execute_ns == (1.0,)


def test_a_capture_with_impossible_conditions_is_refused_in_one_line(tmp_path):

    work = OtherWork(overlap_fractions=(0.5,))
    capture = syn.capture(
        [syn.fusion(conditions=TimingConditions(other_work=work, host=HostTiming(execute_ns=(1.0,))))]
    )
    path = tmp_path / "live.json"
    save_capture(capture, path)
    data = json.loads(path.read_text())
    data["fusions"][0]["conditions"]["other_work"]["overlap_fractions"] = [1.5]
    path.write_text(json.dumps(data))
    with pytest.raises(CaptureFormatError, match=r"overlap_fractions\[0\]: 1.5 is not a fraction between 0 and 1"):
        load_capture(path)
    data["fusions"][0]["conditions"]["other_work"]["overlap_fractions"] = [0.5]
    data["fusions"][0]["conditions"]["host"]["execute_ns"] = [-3.0]
    path.write_text(json.dumps(data))
    with pytest.raises(CaptureFormatError, match=r"host.execute_ns\[0\]: -3.0 is not a duration"):
        load_capture(path)


def test_host_calls_before_the_warm_ups_are_timed_too_and_the_first_call_is_left_out():
    clock = _Clock()
    cost = iter([5000] + [1000] * 50)

    def run_once() -> None:
        clock.now += next(cost)

    timed = WarmupClock(run_once, warmups=3, clock=clock)
    timed.host_calls(10)
    for _ in range(5):
        timed()
    assert timed.host_ns[0] == 5000.0 and len(timed.host_ns) == 13
    assert timed.after_first == (1000.0,) * 12
