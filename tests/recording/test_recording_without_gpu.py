"""The recording logic that needs no GPU, checked on artefacts recorded on the H200
(tests/data/h200_probe/README.md says how) and on a scripted kernel source."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable

import pytest

from fusiondiff.recording.kineto import CUPTI_MISSING, parse_trace
from fusiondiff.recording.nvfuser_adapter import parse_segmentation, split_cuda_sources
from fusiondiff.recording.timing import KernelEvent, KernelSource, SampledRun, kernel_records, measure
from fusiondiff.records.errors import ProfilerError
from fusiondiff.records.model import LaunchConfig, TimingProtocol


@pytest.fixture
def probe_trace(data_dir):
    return json.loads((data_dir / "h200_probe" / "kineto_trace.json").read_text())


def test_kineto_trace_attributes_only_the_fusion_kernels(probe_trace):
    run = parse_trace(probe_trace, 3)
    assert len(run.samples) == 3
    for sample in run.samples:
        # the L2 flush (a FillFunctor kernel launched before each range) is not part of the sample
        assert [k.name.split("(")[0] for k in sample] == ["nvf::nvfuser_inner_persistent_f0_c1_r0_g0"]
        assert sample[0].launch == LaunchConfig(
            grid=(4096, 1, 1), block=(128, 1, 1), shared_mem_bytes=256, registers_per_thread=40
        )
    assert [s[0].duration_ns for s in run.samples] == [19872.0, 19200.0, 19584.0]


def test_kineto_trace_without_kernel_events_is_refused_not_zero(probe_trace):
    # what torch.profiler returns after nvFuser's PythonProfiler took CUPTI: no device events
    broken = copy.deepcopy(probe_trace)
    broken["traceEvents"] = [e for e in broken["traceEvents"] if e.get("cat") != "kernel"]
    with pytest.raises(ProfilerError, match="CUPTI delivered no kernel events"):
        parse_trace(broken, 3)
    assert "PythonProfiler" in CUPTI_MISSING


def test_kineto_trace_missing_sample_ranges(probe_trace):
    with pytest.raises(ProfilerError, match="lacks sample ranges"):
        parse_trace(probe_trace, 5)


def test_segmentation_from_recorded_scheduled_ir(data_dir):
    ir = (data_dir / "h200_probe" / "ir_nvfusion1.txt").read_text()
    seg = parse_segmentation(ir, [])
    assert seg.is_segmented
    assert [(s.group_id, s.scheduler) for s in seg.segments] == [
        (0, "expr_eval"),
        (1, "resize"),
        (2, "resize"),
        (3, "resize"),
    ]
    assert seg.source == "scheduled_ir"


def test_segmentation_of_unsegmented_fusion_comes_from_kernel_names():
    seg = parse_segmentation("Inputs:\n  T0_g\n%kernel {\n}", ["nvfuser_inner_persistent_f0_c1_r0_g0"])
    assert not seg.is_segmented
    assert seg.schedulers == ("inner_persistent",)
    assert seg.source == "kernel_names"


def test_split_cuda_sources():
    code = "// header\n__global__ void nvfuser_a_f0_c1_r0_g0(int x) {\n}\n__global__ void nvfuser_b_f0_c1_r0_g1(int y) {\n}\n"
    sources = split_cuda_sources(code)
    assert list(sources) == ["nvfuser_a_f0_c1_r0_g0", "nvfuser_b_f0_c1_r0_g1"]
    assert "int y" in sources["nvfuser_b_f0_c1_r0_g1"] and "int y" not in sources["nvfuser_a_f0_c1_r0_g0"]


class ScriptedSource(KernelSource):
    """A kernel source that returns prepared durations, like torch.utils.benchmark's mock timers."""

    name = "scripted"

    def __init__(self, durations: list[list[float]]):
        self.durations = durations
        self.calls: list[str] = []

    def sample(self, run_once: Callable[[], object], before_sample: Callable[[], None], count: int) -> SampledRun:
        samples = []
        for i in range(count):
            before_sample()
            run_once()
            launch = LaunchConfig(grid=(1, 1, 1), block=(128, 1, 1))
            samples.append(
                tuple(
                    KernelEvent(name=f"nvfuser_resize_f0_c1_r0_g{g}", start_ns=0.0, duration_ns=d, launch=launch)
                    for g, d in enumerate(self.durations[i])
                )
            )
        return SampledRun(samples=tuple(samples))


@pytest.mark.parametrize(("mode", "flushes"), [("cold", 4), ("warm", 0)])
def test_protocol_flushes_before_every_cold_sample_and_never_when_warm(mode: str, flushes: int) -> None:
    log: list[str] = []
    source = ScriptedSource([[1000.0, 2000.0]] * 4)
    measure(
        lambda: log.append("run"),
        TimingProtocol(warmup=2, samples=4, l2_mode=mode),
        source,
        flush_l2=lambda: log.append("flush"),
        synchronize=lambda: log.append("sync"),
    )
    assert log.count("flush") == flushes
    assert log.count("run") == 2 + 4
    assert log[:3] == ["run", "run", "sync"]  # warm-ups are not timed
    if mode == "cold":
        assert log[3:6] == ["flush", "sync", "run"]


def test_the_clock_is_read_before_while_the_middle_sample_runs_and_after() -> None:
    """A reading taken with nothing running can be the idle clock (issue #23): one is taken right
    after the middle sample is launched, before anything waits for it."""
    log: list[str] = []

    def clock() -> int:
        log.append("clock")
        return 1980 if len(log) > 1 else 345

    run = measure(
        lambda: log.append("run"),
        TimingProtocol(warmup=1, samples=4, l2_mode="warm"),
        ScriptedSource([[1000.0]] * 4),
        flush_l2=lambda: None,
        synchronize=lambda: log.append("sync"),
        read_clock=clock,
    )
    assert log == ["clock", "run", "sync"] + ["sync", "run"] * 3 + ["clock", "sync", "run", "clock"]
    assert run.clock_mhz == (345, 1980, 1980)


def test_kernel_records_group_by_position_and_sum_per_sample():
    source = ScriptedSource([[1000.0, 2000.0], [1100.0, 2100.0], [900.0, 1900.0]])
    run = measure(lambda: None, TimingProtocol(warmup=0, samples=3), source, lambda: None, lambda: None)
    kernels, fusion, warnings = kernel_records(run, {"nvfuser_resize_f0_c1_r0_g1": "abc"})
    assert [k.normalized_name for k in kernels] == ["nvfuser_resize_g0", "nvfuser_resize_g1"]
    assert kernels[0].timing.samples_ns == (1000.0, 1100.0, 900.0)
    assert kernels[1].source_hash == "abc" and kernels[0].source_hash is None
    assert fusion.samples_ns == (3000.0, 3200.0, 2800.0)
    assert warnings == []


def test_kernel_records_warn_when_samples_launch_different_kernels():
    source = ScriptedSource([[1000.0, 2000.0], [1000.0]])
    run = measure(lambda: None, TimingProtocol(warmup=0, samples=2), source, lambda: None, lambda: None)
    kernels, fusion, warnings = kernel_records(run)
    assert len(kernels) == 2 and kernels[1].timing.count == 1
    assert any("different numbers of kernels" in w for w in warnings)
