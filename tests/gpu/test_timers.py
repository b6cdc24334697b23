"""The two timers on the GPU: CUPTI conflicts refused in one line (each order, in a fresh process),
and one fusion recorded by both timers, each in its own process, reconciled.

    python3 -m pytest -q -s -m gpu tests/gpu/test_timers.py
"""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .test_harness import define_seed_rmsnorm

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parents[2]

FUSION = """
import torch
from nvfuser_direct import FusionDefinition, DataType
with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    fd.add_output(fd.ops.sum(fd.ops.mul(t0, t0), dims=[1]))
x = torch.randn(1024, 4096, device="cuda")
fd.execute([x])
"""

# the seed's RMSNorm (tests/gpu/test_harness.py), as a script with fresh inputs
RMSNORM_SCRIPT = "\n".join(
    [
        "import torch",
        "from nvfuser_direct import FusionDefinition, DataType",
        inspect.getsource(define_seed_rmsnorm),
        "with FusionDefinition() as fd:",
        "    define_seed_rmsnorm(fd)",
        "inputs = [",
        '    torch.randn((4, 1024, 4096), dtype=torch.bfloat16, device="cuda:0"),',
        '    torch.randn((4096,), dtype=torch.bfloat16, device="cuda:0"),',
        "]",
        "fd.execute(inputs)",
        "",
    ]
)


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO, env=None
    )
    print(result.stdout[-3000:], result.stderr[-3000:])
    return result


def refused_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("REFUSED:")]


def test_torch_profiler_then_nvfuser_timer_is_refused_and_the_process_survives(tmp_path):
    # the user's torch.profiler runs before fusiondiff is even imported: only the CUPTI probe can
    # know; starting PythonProfiler now would make nvFuser call exit()
    out = tmp_path / "c.json"
    code = FUSION + textwrap.dedent(
        f"""
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            fd.execute([x])
        torch.cuda.synchronize()
        print("user profiler saw", sum(1 for e in prof.events() if e.device_type.name == "CUDA"), "kernels")

        from fusiondiff.records.errors import FusionDiffError
        from fusiondiff.front.live import capture
        from fusiondiff.records.options import RecordingOptions
        try:
            with capture({str(out)!r}, options=RecordingOptions().with_timer("nvfuser")):
                fd.execute([x])
        except FusionDiffError as exc:
            print("REFUSED:", exc)
        print("SURVIVED")
        """
    )
    result = run_python(code)
    assert result.returncode == 0, "the process died: PythonProfiler was started after torch.profiler"
    assert "SURVIVED" in result.stdout
    refused = refused_lines(result.stdout)
    assert len(refused) == 1 and "PythonProfiler" in refused[0]
    assert not out.exists()  # nothing recorded, so no zero time either


def test_fusiondiff_kineto_then_nvfuser_timer_in_one_process_is_refused(tmp_path):
    code = FUSION + textwrap.dedent(
        f"""
        from fusiondiff.records.errors import FusionDiffError
        from fusiondiff.front.live import capture
        from fusiondiff.records.options import RecordingOptions
        with capture({str(tmp_path / "k.json")!r}):
            fd.execute([x])
        try:
            with capture({str(tmp_path / "n.json")!r}, options=RecordingOptions().with_timer("nvfuser")):
                fd.execute([x])
        except FusionDiffError as exc:
            print("REFUSED:", exc)
        print("SURVIVED")
        """
    )
    result = run_python(code)
    assert result.returncode == 0 and "SURVIVED" in result.stdout
    refused = refused_lines(result.stdout)
    assert len(refused) == 1 and "torch.profiler already used CUPTI" in refused[0]
    assert (tmp_path / "k.json").exists() and not (tmp_path / "n.json").exists()


def test_user_python_profiler_then_either_timer_is_refused_not_recorded_as_zero(tmp_path):
    # the user's own PythonProfiler holds CUPTI: the Kineto canary finds no events, and from then on
    # both timers are refused (the probe cannot tell whose subscription it is)
    code = FUSION + textwrap.dedent(
        f"""
        from nvfuser_direct import PythonProfiler
        from fusiondiff.records.errors import FusionDiffError
        from fusiondiff.front.live import capture
        from fusiondiff.records.options import RecordingOptions
        with PythonProfiler() as prof:
            fd.execute([x])
        print("user profiler saw", len(prof.profile.kernel_profiles), "kernels")
        for name, timer in (("k.json", "kineto"), ("n.json", "nvfuser")):
            try:
                with capture({str(tmp_path)!r} + "/" + name, options=RecordingOptions().with_timer(timer)):
                    fd.execute([x])
            except FusionDiffError as exc:
                print("REFUSED:", exc)
        print("SURVIVED")
        """
    )
    result = run_python(code)
    assert result.returncode == 0 and "SURVIVED" in result.stdout
    refused = refused_lines(result.stdout)
    assert len(refused) == 2
    assert "CUPTI delivered no kernel events" in refused[0]
    assert "CUPTI" in refused[1] and "PythonProfiler" in refused[1]
    assert not (tmp_path / "k.json").exists() and not (tmp_path / "n.json").exists()


def test_nvfuser_timer_then_kineto_timer_is_refused_and_nothing_is_zero(tmp_path):
    code = FUSION + textwrap.dedent(
        f"""
        from fusiondiff.records.errors import FusionDiffError
        from fusiondiff.front.live import capture
        from fusiondiff.records.options import RecordingOptions
        with capture({str(tmp_path / "n.json")!r}, options=RecordingOptions().with_timer("nvfuser")) as cap:
            fd.execute([x])
        print("nvfuser timer median us", cap.capture.fusions[0].timing.median_ns / 1000)
        try:
            with capture({str(tmp_path / "k.json")!r}):
                fd.execute([x])
        except FusionDiffError as exc:
            print("REFUSED:", exc)
        print("SURVIVED")
        """
    )
    result = run_python(code)
    assert result.returncode == 0 and "SURVIVED" in result.stdout
    refused = refused_lines(result.stdout)
    assert len(refused) == 1 and "PythonProfiler holds CUPTI" in refused[0]
    assert not (tmp_path / "k.json").exists()
    from fusiondiff.io.store import load_capture

    nv = load_capture(tmp_path / "n.json")
    assert nv.protocol.method == "nvfuser" and nv.fusions[0].timing.timer == "nvfuser"
    assert nv.fusions[0].timing.min_ns > 0 and all(k.timing.min_ns > 0 for k in nv.fusions[0].kernels)


def test_one_fusion_recorded_by_both_timers_agrees(tmp_path, capsys):
    from fusiondiff.diff.timers import reconcile
    from fusiondiff.front.cli import main
    from fusiondiff.io.store import load_capture
    from fusiondiff.report.formats.timers_text import render_reconciliation

    script = tmp_path / "rmsnorm.py"
    script.write_text(RMSNORM_SCRIPT)
    out = tmp_path / "replay.json"
    code = main(["replay", str(script), "-o", str(out), "--timer", "both", "--samples", "30"])
    printed = capsys.readouterr().out
    kineto, nvfuser = load_capture(out), load_capture(tmp_path / "replay.nvfuser.json")
    result = reconcile(kineto, nvfuser, tolerance=0.05)
    table = render_reconciliation(result)
    with capsys.disabled():
        print("\n" + table)
    assert printed == table
    assert (kineto.protocol.method, nvfuser.protocol.method) == ("kineto", "nvfuser")
    assert len(result.fusions) == 1 and not result.unmatched_a and not result.unmatched_b
    fusion = result.fusions[0]
    # identical kernel lists and launch configurations
    assert not fusion.only_a and not fusion.only_b
    assert [k.normalized_name for k in kineto.fusions[0].kernels] == [
        k.normalized_name for k in nvfuser.fusions[0].kernels
    ]
    assert all(not k.launch_differences for k in fusion.kernels)
    nk = nvfuser.fusions[0].kernels[0]
    assert nk.reported_bandwidth is not None and nk.reported_bandwidth.suspect is None
    assert nk.launch.dynamic_smem_bytes is not None and nk.launch.registers_per_thread
    # medians within 5 %
    assert abs(fusion.ratio - 1) <= 0.05, table
    assert code == 0 and result.agree
