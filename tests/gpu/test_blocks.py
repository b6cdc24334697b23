"""Block-level timelines recorded on a GPU, as a user runs them (``--sm-timeline``): the seed RMSNorm
live in a Thunder session with its activation at storage offset 1, against nvFuser's own repro
replayed in a fresh process. Needs a CUDA GPU, nvFuser and Thunder; skipped elsewhere.

``repro/blocks/verify.sh`` runs the same and more (the matmul-contention session, a training step's
round trip) and prints the figures; what it recorded on the H200 is in tests/data/blocks/h200, and
``h200/gpu_tests.log`` is this file's run there (3 passed), followed by ``fusiondiff sm-timeline``
on its live capture.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "repro" / "blocks" / "rmsnorm_session.py"


def fusiondiff(*args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "fusiondiff", *args], capture_output=True, text=True, timeout=900)
    print(f"$ fusiondiff {' '.join(args)}  -> exit {result.returncode}", result.stdout[-3000:], result.stderr[-3000:])
    return result


@pytest.fixture(scope="module")
def seed(tmp_path_factory):
    pytest.importorskip("thunder")
    from fusiondiff.io.store import load_capture

    work = tmp_path_factory.mktemp("blocks")
    live = work / "live.json"
    assert (
        fusiondiff(
            "capture", str(SESSION), "--offset", "1", "--save-inputs", "--sm-timeline", "-o", str(live)
        ).returncode
        == 0
    )
    script = work / "nvfuser_repro.py"
    script.write_text(load_capture(live).fusions[0].repro_script)
    replay = work / "replay.json"
    assert fusiondiff("replay", str(script), "--sm-timeline", "-o", str(replay)).returncode == 0
    return work, load_capture(live), load_capture(replay)


def test_every_cta_of_both_sides_is_measured_with_identical_outputs(seed):
    _, live, replay = seed
    for capture in (live, replay):
        timeline = capture.fusions[0].sm_timeline
        assert timeline is not None and timeline.outputs_identical, timeline
        (kernel,) = timeline.kernels
        assert kernel.measured, kernel.refusal
        assert len(kernel.runs) == 5 and all(run.ctas == 4096 for run in kernel.runs)
        assert kernel.overhead is not None and kernel.overhead <= timeline.max_overhead
        assert kernel.stat("sms_used") == capture.environment.sm_count


def test_the_offset_kernel_needs_more_waves_than_nvfusers_repro(seed):
    work, _, _ = seed
    result = fusiondiff("diff", str(work / "live.json"), str(work / "replay.json"))
    assert result.returncode == 1
    assert "[storage_offset, cause]" in result.stdout and "blocks_extra_wave" in result.stdout
    assert "block level (measured per CTA" in result.stdout


def test_the_views_read_the_recorded_arrays(seed):
    work, _, _ = seed
    out = work / "report.html"
    assert fusiondiff("report", str(work / "live.json"), str(work / "replay.json"), "-o", str(out)).returncode == 0
    assert '<svg class="occ"' in out.read_text()
