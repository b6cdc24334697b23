"""What a fusion's timing ran beside, recorded on a GPU as a user captures it (issue #27): the
LayerNorm + SiLU session of ``repro/environment/layernorm_session.py`` (small here) alone, then with
a thread keeping a second stream busy with matmuls. Needs a CUDA GPU, nvFuser and Thunder (and
nvidia-ml-py for the NVML part); skipped elsewhere.

``repro/environment/verify.sh`` runs the four scenarios of the issue at full size and prints their
diffs; what it recorded on the H200 is in tests/data/environment.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from fusiondiff.recording.host_time import HOST_CALLS

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "repro" / "environment" / "layernorm_session.py"


def _capture(tmp_path: Path, name: str, *args: str):
    pytest.importorskip("thunder")
    from fusiondiff.io.store import load_capture

    out = tmp_path / f"{name}.json"
    cmd = [sys.executable, "-m", "fusiondiff", "capture", str(SESSION), "-o", str(out), "--", "--rows", "4096", *args]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    (fusion,) = load_capture(out).fusions
    return fusion


def _pids_on_the_gpu() -> set[int]:
    """The processes NVML lists on GPU 0 now: this test runner's own, where an earlier test in it made
    a CUDA context (test_end_to_end's tensors are rebuilt on the GPU), is not the session's neighbour."""
    if importlib.util.find_spec("pynvml") is None:
        return set()
    import pynvml

    pynvml.nvmlInit()
    try:
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        return {p.pid for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle)}
    finally:
        pynvml.nvmlShutdown()


def test_a_quiet_session_records_its_host_times_and_no_other_work(tmp_path):
    there_before = _pids_on_the_gpu()
    fusion = _capture(tmp_path, "quiet")
    conditions = fusion.conditions
    assert conditions is not None and conditions.host is not None
    host = conditions.host
    # the host calls and the protocol's five warm-ups, timed back to back, the first left out
    assert len(host.execute_ns) == HOST_CALLS + 5 - 1
    assert len(host.session_execute_ns) == 2 and len(host.session_call_ns) == 2  # calls 2 and 3 of 3
    assert all(c >= e for c, e in zip(host.session_call_ns, host.session_execute_ns))  # the wrapper holds the execute
    work = conditions.other_work
    assert work is not None and len(work.overlap_fractions) == 30 and work.windows_overlapped == 0
    if importlib.util.find_spec("pynvml") is not None:
        device = conditions.device
        assert device is not None and len(device.clock_event_reasons) == 3 and device.window_ns > 0
        newcomers = [p.pid for p in device.other_processes if p.pid not in there_before]
        assert device.own_process_listed and newcomers == [], (device.other_processes, there_before)


def test_a_busy_second_stream_is_seen_as_other_work(tmp_path):
    fusion = _capture(tmp_path, "busy", "--busy-stream")
    work = fusion.conditions.other_work if fusion.conditions else None
    assert work is not None and work.windows_overlapped > 0 and work.mean_fraction > 0
    assert work.kernels and all(k.overlap_ns > 0 and k.calls >= 1 for k in work.kernels)
