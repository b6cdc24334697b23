"""Measuring the GPU's DRAM peak when recording ends (issue #43): what the CPU can check of it. The
measurement itself runs on the GPU (tests/gpu, benchmarks/bench_peak.py)."""

from __future__ import annotations

import pytest

from fusiondiff.front.cli import _recording_options
from fusiondiff.front.cli_parser import build_parser
from fusiondiff.recording import peak
from fusiondiff.records.environment import Environment, PeakBandwidth
from fusiondiff.records.options import RecordingOptions

GIB = 1 << 30


def test_the_buffer_shrinks_with_free_memory_and_stays_above_the_l2():
    assert peak.copy_bytes_for(80 * GIB, 50 * 2**20) == GIB
    assert peak.copy_bytes_for(2 * GIB, 50 * 2**20) == GIB // 2  # two buffers in 3/4 of what is free
    assert peak.copy_bytes_for(GIB, 50 * 2**20) == GIB // 4
    assert peak.copy_bytes_for(GIB // 2, 50 * 2**20) is None
    # a 126 MB L2 (B200) needs a buffer of at least four times that: 512 MiB
    assert peak.copy_bytes_for(GIB, 126 * 10**6) is None
    assert peak.copy_bytes_for(2 * GIB, 126 * 10**6) == GIB // 2


def test_a_failed_measurement_keeps_the_environment_and_says_why(monkeypatch):
    def broken(device_index, l2_bytes):
        raise RuntimeError("CUDA error: out of memory\nmore lines")

    monkeypatch.setattr(peak, "measure_peak", broken)
    env = Environment(gpu_name="NVIDIA H100 80GB HBM3")
    warnings: list[str] = []
    lines: list[str] = []
    assert peak.with_peak(env, warnings, lines.append) is env
    assert warnings == ["peak bandwidth not measured: CUDA error: out of memory"] and lines == []


def test_a_measured_peak_goes_into_the_environment(monkeypatch):
    measured = PeakBandwidth(gbs=3012.4, best_gbs=3030.0, copy_bytes=GIB, copies=20, seconds=0.08)
    monkeypatch.setattr(peak, "measure_peak", lambda device_index, l2_bytes: (measured, None))
    lines: list[str] = []
    env = peak.with_peak(Environment(cuda_device_index=0), [], lines.append)
    assert env.peak_bandwidth == measured
    assert lines == ["fusiondiff: the GPU's DRAM bandwidth (a device-to-device copy): 3012 GB/s"]


@pytest.mark.parametrize("command", ["capture", "replay"])
def test_no_peak_reaches_the_recording_options(command):
    parser = build_parser()
    args = parser.parse_args([command, "--no-peak", "x.py", "-o", "out.json"])
    assert _recording_options(args).peak is False
    args = parser.parse_args([command, "x.py", "-o", "out.json"])
    assert _recording_options(args).peak is True


def test_the_replay_child_gets_the_peak_option_back():
    options = RecordingOptions(peak=False)
    assert RecordingOptions.from_jsonable(options.to_jsonable()).peak is False
