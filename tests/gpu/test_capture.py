"""Live capture on the GPU: the seed model's fusions, kernels, timings, and a session left as it was."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from fusiondiff.records.errors import CaptureError
from fusiondiff.records.model import TimingProtocol
from fusiondiff.records.options import RecordingOptions

pytestmark = pytest.mark.gpu


def test_forward_captures_all_13_fusions(seed_model, tmp_path):
    import torch

    from fusiondiff.front.live import capture
    from fusiondiff.io.store import load_capture

    _, compiled, idx = seed_model
    with capture(tmp_path / "live.json", options=RecordingOptions(protocol=TimingProtocol(samples=10))) as cap:
        compiled(idx)
    loaded = load_capture(cap.path)
    assert loaded == cap.capture
    names = [f.name for f in loaded.fusions]
    assert names == [f"nvFusion{i}" for i in range(13)]
    for f in loaded.fusions:
        print(
            f"{f.name}: {len(f.kernels)} kernel(s) {[k.normalized_name for k in f.kernels]} "
            f"{f.timing.median_ns / 1000:.2f} us, segments {f.segmentation.schedulers}"
        )
        assert f.trace == "forward"
        assert len(f.kernels) in (1, 3)
        assert f.timing.count == 10 and f.timing.median_ns > 0
        for k in f.kernels:
            assert k.timing.count == 10 and k.timing.min_ns > 0
            assert k.launch.grid[0] > 0 and k.launch.block[0] > 0 and k.launch.registers_per_thread
            assert k.scheduler is not None
    assert [len(loaded.fusions[i].kernels) for i in (1, 5, 9)] == [3, 3, 3]
    assert loaded.fusions[0].inputs[0].dtype == "torch.int64"
    assert loaded.fusions[0].inputs[0].min_value >= 0 and loaded.fusions[0].inputs[0].max_value < 255
    assert loaded.environment.gpu_name and loaded.environment.l2_bytes
    assert not torch.autograd.profiler._is_profiler_enabled


def test_capture_leaves_outputs_bitwise_identical_and_memory_released(seed_model):
    import torch

    from fusiondiff.front.live import capture

    _, compiled, idx = seed_model
    torch.manual_seed(1)
    reference = compiled(idx).detach().clone()
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.manual_seed(1)
    with capture(options=RecordingOptions(protocol=TimingProtocol(samples=10))) as cap:
        captured = compiled(idx).detach().clone()
    torch.cuda.synchronize()
    assert torch.equal(reference, captured)
    assert cap.capture is not None and len(cap.capture.fusions) == 13
    del captured
    after = torch.cuda.memory_allocated()
    print(f"allocated before {before} B, after {after} B")
    # input copies and the L2 flush buffer (twice the GPU's L2) are released
    assert after - before < 2**20, (before, after)
    assert not torch.autograd.profiler._is_profiler_enabled


def test_training_step_captures_backward_fusions(seed_model):
    from fusiondiff.front.live import capture

    model, compiled, idx = seed_model
    with capture(options=RecordingOptions(protocol=TimingProtocol(samples=10))) as cap:
        loss = compiled(idx).float().sum()
        loss.backward()
    model.zero_grad(set_to_none=True)
    traces = [f.trace for f in cap.capture.fusions]
    print(f"training step: {traces.count('forward')} forward and {traces.count('backward')} backward fusions")
    assert traces.count("forward") == 13
    assert traces.count("backward") >= 1
    assert all(f.kernels or f.warnings for f in cap.capture.fusions)


def test_module_not_compiled_by_thunder_is_a_clear_error(tmp_path):
    import torch

    from fusiondiff.front.live import capture

    layer = torch.nn.Linear(16, 16, device="cuda")
    with pytest.raises(CaptureError, match="no nvFusion was executed"):
        with capture(tmp_path / "none.json"):
            layer(torch.randn(4, 16, device="cuda"))
    assert not (tmp_path / "none.json").exists()


def test_cupti_held_by_python_profiler_is_detected_not_recorded_as_zero(tmp_path):
    # CUPTI takes one subscriber: after nvFuser's PythonProfiler ran, Kineto sees no kernels.
    code = textwrap.dedent(
        f"""
        import torch
        from nvfuser_direct import FusionDefinition, DataType, PythonProfiler
        from fusiondiff.front.live import capture
        from fusiondiff.records.errors import ProfilerError
        with FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
            fd.add_output(fd.ops.sum(fd.ops.mul(t0, t0), dims=[1]))
        x = torch.randn(1024, 4096, device="cuda")
        with PythonProfiler():
            fd.execute([x])
        try:
            with capture({str(tmp_path / "c.json")!r}):
                fd.execute([x])
        except ProfilerError as exc:
            print("REFUSED:", exc)
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    print(result.stdout[-2000:], result.stderr[-2000:])
    assert "REFUSED: CUPTI delivered no kernel events" in result.stdout
    assert not (tmp_path / "c.json").exists()
