"""On the GPU: each legacy script, translated, launches the same kernels as its hand-written direct
version (``tests/data/legacy_scripts``; the CPU side is ``tests/replay/test_legacy_generations.py``).

All the replays run in one fresh process (about 80 scripts: one process each would spend most of
the time importing torch and nvFuser); each script's replay is still its own ``replay_script`` call
with its own capture file, and a script that fails is reported with its own message.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "tests" / "data" / "legacy_scripts"
LEGACY = sorted(p for p in SCRIPTS.glob("*.py") if not p.name.startswith("today_"))
TODAY = sorted(SCRIPTS.glob("today_*.py"))

DRIVER = """
import json, sys
from fusiondiff.records.errors import FusionDiffError
from fusiondiff.records.model import TimingProtocol
from fusiondiff.records.options import RecordingOptions
from fusiondiff.replay.runner import replay_script
from fusiondiff.io.store import load_capture

out, scripts = sys.argv[1], sys.argv[2:]
results = {}
for i, script in enumerate(scripts):
    try:
        capture = load_capture(replay_script(
            script, output=f"{out}/{i}.json", options=RecordingOptions(protocol=TimingProtocol(warmup=2, samples=5)), in_process=True
        ))
        results[script] = {"kernels": [
            [k.normalized_name, k.launch.grid, k.launch.block, k.launch.shared_mem_bytes, k.launch.registers_per_thread]
            for fusion in capture.fusions for k in sorted(fusion.kernels, key=lambda k: k.order)
        ]}
    except FusionDiffError as exc:
        results[script] = {"error": str(exc)}
    # written after each script: what ran survives a crash of the process in a later one
    with open(f"{out}/results.json", "w") as f:
        json.dump(results, f)
"""


@pytest.fixture(scope="module")
def replays(tmp_path_factory) -> dict[str, dict]:
    """Kernels (normalized name, grid, block, shared memory, registers) of every script's replay."""
    out = tmp_path_factory.mktemp("legacy_replays")
    scripts = [*LEGACY, *(SCRIPTS / "direct" / p.name for p in LEGACY), *TODAY]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", DRIVER, str(out), *map(str, scripts)], cwd=ROOT, env=env, timeout=1800)
    results = json.loads((out / "results.json").read_text()) if (out / "results.json").exists() else {}
    died = f"the replay process died (exit code {done.returncode}) before this script's replay ended"
    return {str(s): results.get(str(s), {"error": died}) for s in scripts}


@pytest.mark.parametrize("script", LEGACY, ids=lambda p: p.stem)
def test_translated_legacy_script_launches_the_kernels_of_its_direct_version(replays, script: Path):
    legacy, direct = replays[str(script)], replays[str(SCRIPTS / "direct" / script.name)]
    assert "error" not in direct, f"the hand-written direct version failed: {direct['error']}"
    assert "error" not in legacy, f"the translated script failed: {legacy['error']}"
    print(script.name, legacy["kernels"])
    assert legacy["kernels"] and legacy["kernels"] == direct["kernels"]


@pytest.mark.parametrize("script", TODAY, ids=lambda p: p.stem)
def test_direct_script_of_today_replays(replays, script: Path):
    result = replays[str(script)]
    assert "error" not in result, result.get("error")
    assert result["kernels"]
