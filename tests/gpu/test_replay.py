"""Replay on the GPU: legacy and direct scripts, inputs from a capture, faithful repros, bad scripts."""

from __future__ import annotations

import inspect
import os
import textwrap
import time
from pathlib import Path

import pytest

from fusiondiff.records.errors import ReplayError
from fusiondiff.records.model import TimingProtocol
from fusiondiff.records.options import RecordingOptions

from .test_harness import define_seed_rmsnorm

pytestmark = pytest.mark.gpu

DATA = Path(__file__).parent.parent / "data"
QUICK = TimingProtocol(warmup=3, samples=10)

RMSNORM_SCRIPT = textwrap.dedent(
    """
    import torch
    from nvfuser_direct import FusionDefinition, DataType
    {definition}
    with FusionDefinition() as fd:
        define_seed_rmsnorm(fd)
    OFFSET = {offset}
    x = torch.randn(4 * 1024 * 4096 + OFFSET, dtype=torch.bfloat16, device="cuda")[OFFSET:].view(4, 1024, 4096)
    w = torch.randn(4096, dtype=torch.bfloat16, device="cuda")
    fd.execute([x, w])
    """
)


def _script(offset: int) -> str:
    """A self-contained script running the seed RMSNorm with its input at a storage offset."""
    definition = inspect.getsource(define_seed_rmsnorm)
    return RMSNORM_SCRIPT.replace("{definition}", definition).replace("{offset}", str(offset))


def _kernels(capture):
    return [
        (k.normalized_name, k.launch.block, k.launch.registers_per_thread) for f in capture.fusions for k in f.kernels
    ]


def test_seed_legacy_script_replays(tmp_path):
    from fusiondiff.io.store import load_capture
    from fusiondiff.replay.runner import replay_script

    path = replay_script(
        str(DATA / "seed" / "legacy_repro.py"),
        output=str(tmp_path / "r.json"),
        options=RecordingOptions(protocol=QUICK),
    )
    capture = load_capture(path)
    print("legacy seed replay:", _kernels(capture), capture.fusions[0].timing.median_ns / 1000, "us")
    assert len(capture.fusions) == 1
    assert capture.fusions[0].kernels[0].scheduler == "inner_persistent"
    assert any("translated" in w for w in capture.warnings)


def test_storage_offset_survives_fusiondiff_repro_but_not_nvfusers(tmp_path):
    from fusiondiff.io.store import load_capture
    from fusiondiff.replay.repro import write_repros
    from fusiondiff.replay.runner import replay_script

    script = tmp_path / "offset.py"
    script.write_text(_script(1))
    live = load_capture(
        replay_script(str(script), output=str(tmp_path / "live.json"), options=RecordingOptions(protocol=QUICK))
    )
    assert live.fusions[0].inputs[0].alignment_bytes == 2 and live.fusions[0].inputs[0].storage_offset == 1

    nvf_script = tmp_path / "nvfuser_repro.py"
    nvf_script.write_text(live.fusions[0].repro_script)
    nvf = load_capture(
        replay_script(str(nvf_script), output=str(tmp_path / "nvf.json"), options=RecordingOptions(protocol=QUICK))
    )
    ours_script = write_repros(tmp_path / "live.json", tmp_path / "ours.py")[0]
    ours = load_capture(
        replay_script(str(ours_script), output=str(tmp_path / "ours.json"), options=RecordingOptions(protocol=QUICK))
    )
    print("live", _kernels(live), "\nnvFuser repro", _kernels(nvf), "\nfusiondiff repro", _kernels(ours))
    assert nvf.fusions[0].inputs[0].storage_offset == 0
    assert _kernels(nvf) != _kernels(live)
    assert ours.fusions[0].inputs[0].alignment_bytes == 2
    assert _kernels(ours) == _kernels(live)


def test_replay_in_three_processes_pools_them_and_the_diff_measures_their_spread(tmp_path):
    """``replay --processes 3``: three fresh processes, one capture whose fusion holds the other two
    processes' timings; against a replay of the same fusion at storage offset 1 the offset is still
    the first cause, judged against B's measured spread (A's one process keeps its calibration)."""
    from tests.inprocess import fusiondiff

    aligned, offset = tmp_path / "aligned.py", tmp_path / "offset.py"
    aligned.write_text(_script(0))
    offset.write_text(_script(1))
    quick = ("--warmup", "3", "--samples", "10")
    run = fusiondiff("replay", aligned, "-o", tmp_path / "b.json", "--processes", "3", *quick)
    assert run.returncode == 0, run.stderr
    assert "process 3 of 3" in run.stderr and "3 processes pooled" in run.stderr
    assert not list(tmp_path.glob(".processes-*")), "the other processes' folder is left behind"
    assert "===== process 3 =====" in (tmp_path / "b.log").read_text()
    from fusiondiff.io.store import load_capture

    (record,) = load_capture(tmp_path / "b.json").fusions
    assert len(record.other_process_timings) == 2 and all(t.count == 10 for t in record.other_process_timings)
    assert fusiondiff("replay", offset, "-o", tmp_path / "a.json", *quick).returncode == 0
    run = fusiondiff("diff", tmp_path / "a.json", tmp_path / "b.json")
    print(run.stdout)
    text = " ".join(run.stdout.split())
    assert run.returncode == 1 and "measured in 3 processes of B" in text and "calibrated for A" in text
    assert "1. [storage_offset, cause]" in text


def test_inputs_from_capture_replace_the_scripts(tmp_path):
    from fusiondiff.io.store import load_capture
    from fusiondiff.replay.runner import replay_script

    live_script = tmp_path / "live.py"
    live_script.write_text(_script(1))
    replay_script(str(live_script), output=str(tmp_path / "live.json"), options=RecordingOptions(protocol=QUICK))
    aligned = tmp_path / "aligned.py"
    aligned.write_text(_script(0))
    path = replay_script(
        str(aligned),
        output=str(tmp_path / "r.json"),
        options=RecordingOptions(protocol=QUICK),
        inputs_capture=str(tmp_path / "live.json"),
        in_process=True,
    )
    capture = load_capture(path)
    assert capture.fusions[0].inputs[0].storage_offset == 1
    assert any("inputs replaced" in w for w in capture.warnings)


def test_script_that_raises_keeps_what_ran_before(tmp_path):
    from fusiondiff.io.store import load_capture
    from fusiondiff.replay.runner import replay_script

    script = tmp_path / "raises.py"
    script.write_text(_script(0) + "\nraise RuntimeError('boom')\n")
    with pytest.raises(ReplayError, match="RuntimeError: boom.*1 fusion"):
        replay_script(str(script), output=str(tmp_path / "r.json"), options=RecordingOptions(protocol=QUICK))
    assert len(load_capture(tmp_path / "r.json").fusions) == 1


def test_script_that_hangs_is_stopped_and_its_group_is_gone(tmp_path):
    from fusiondiff.io.store import load_capture
    from fusiondiff.replay.runner import replay_script

    pidfile = tmp_path / "child.pid"
    script = tmp_path / "hangs.py"
    script.write_text(
        _script(0)
        + textwrap.dedent(
            f"""
            import subprocess, time
            p = subprocess.Popen(["sleep", "600"])
            open({str(pidfile)!r}, "w").write(str(p.pid))
            time.sleep(600)
            """
        )
    )
    start = time.monotonic()
    with pytest.raises(ReplayError, match="timeout"):
        replay_script(
            str(script), output=str(tmp_path / "r.json"), options=RecordingOptions(protocol=QUICK), timeout_s=45
        )
    print(f"hang stopped after {time.monotonic() - start:.1f} s")
    assert len(load_capture(tmp_path / "r.json").fusions) == 1
    grandchild = int(pidfile.read_text())
    time.sleep(0.5)
    with pytest.raises(ProcessLookupError):
        os.kill(grandchild, 0)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("import torch\nprint('no fusion here')\n", "executed no fusion"),
        ("def broken(:\n", "not valid Python"),
    ],
)
def test_bad_scripts_are_one_line_errors(tmp_path, content, message):
    from fusiondiff.replay.runner import replay_script

    script = tmp_path / "bad.py"
    script.write_text(content)
    with pytest.raises(ReplayError, match=message):
        replay_script(str(script), output=str(tmp_path / "r.json"), options=RecordingOptions(protocol=QUICK))
    assert not (tmp_path / "r.json").exists()
