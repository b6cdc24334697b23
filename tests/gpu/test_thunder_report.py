"""A folder Thunder wrote on this GPU replayed as a side of a diff: ``repro/thunder_report/record.py``
(a thunderfx program whose activation sits at storage offset 1, captured live, then Thunder's
``thunderfx_benchmark_report(..., compare_fusion=True, time_rtol=0.0)`` and
``save_thunderfx_repros(..., save_fusion=True)``), then ``fusiondiff replay`` of each folder and
``fusiondiff diff`` against the live capture."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).parent.parent.parent


def _env() -> dict[str, str]:
    """This environment with the checkout first on ``PYTHONPATH``."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def _run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The program's live capture and Thunder's two folders, at the committed recording's size
    ([4096, 4096]). On a fresh H100 machine it took 141 s at that size (2026-12-08). At
    [1024, 1024] it passed on a machine where ``record.sh`` had just run, and ran past 200 s on two
    fresh ones, for a reason not found.
    Stopped at 240 s, so the batch reports it inside its limit, with the recording's stacks."""
    pytest.importorskip("thunder")
    out = tmp_path_factory.mktemp("thunder_report")
    with subprocess.Popen(
        [sys.executable, "repro/thunder_report/record.py", str(out)],
        cwd=ROOT,
        env={**_env(), "PYTHONFAULTHANDLER": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            # SIGABRT with PYTHONFAULTHANDLER set: the child writes every thread's stack to stderr
            proc.send_signal(signal.SIGABRT)
            stdout, stderr = proc.communicate(timeout=60)
            pytest.fail(f"record.py still running at 240 s; its stacks:\n{stderr[-6000:]}\n{stdout[-2000:]}")
    assert proc.returncode == 0, stdout[-3000:] + stderr[-3000:]
    return out


@pytest.mark.parametrize("folder", ["report", "repros"])
def test_thunder_folder_replays_and_pairs_by_definition(recorded: Path, folder: str) -> None:
    from fusiondiff.diff.core import diff
    from fusiondiff.io.store import load_capture

    replay = recorded / f"replay_{folder}.json"
    args = ["-m", "fusiondiff", "replay", str(recorded / "thunder" / folder), "-o", str(replay)]
    if folder == "report":
        args += ["--thunder-stream", str(recorded / "thunder" / "report.txt")]
    result = _run(*args)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Thunder's folder" in result.stderr
    b = load_capture(replay)
    assert b.fusions and all(f.name.startswith("graph") and "_nvFusion" in f.name for f in b.fusions)
    a = load_capture(recorded / "live.json")
    result_diff = diff(a, b)
    assert len(result_diff.pairs) == len(b.fusions)
    assert all(p.matched_by.startswith("definition") for p in result_diff.pairs)
    if folder == "report":
        assert {f.timer for f in b.thunder_figures} >= {"WallTime", "KernelTime"}
        shown = _run("-m", "fusiondiff", "diff", str(recorded / "live.json"), str(replay))
        assert "Thunder's own figures beside fusiondiff's" in shown.stdout
        # the live activation at storage offset 1 against Thunder's contiguous inputs
        assert "storage_offset" in shown.stdout
