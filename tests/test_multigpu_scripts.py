"""The multi-GPU scripts and their driver (repro/multigpu) without a GPU: the scripts compile, the
driver keeps NVLink multicast off and reads rank files (built here from the recorded Pythia step,
rank 1 SYNTHETIC with a planted offset, as in tests/test_ranks.py)."""

from __future__ import annotations

import importlib.util
import py_compile
from pathlib import Path

import pytest
from test_ranks import _as_rank, _planted_offset

from fusiondiff.store import dumps_capture, load_capture

MULTIGPU = Path(__file__).parent.parent / "repro" / "multigpu"
PYTHIA = Path(__file__).parent / "data" / "fidelity" / "pythia" / "live.json"


def _driver():
    spec = importlib.util.spec_from_file_location("check_multigpu", MULTIGPU / "check_multigpu.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["train_ddp.py", "train_fsdp.py", "train_thunder_dist.py", "parallel.py"])
def test_the_scripts_compile(name: str, tmp_path: Path) -> None:
    py_compile.compile(str(MULTIGPU / name), cfile=str(tmp_path / "x.pyc"), doraise=True)


def test_multicast_stays_off(monkeypatch) -> None:
    driver = _driver()
    for name in driver.MULTICAST_OFF:
        monkeypatch.delenv(name, raising=False)
    env = driver.environment()
    assert {k: env[k] for k in driver.MULTICAST_OFF} == driver.MULTICAST_OFF
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "1")
    with pytest.raises(SystemExit, match="NCCL_NVLS_ENABLE=1"):
        driver.environment()


def test_rank_files_are_described(tmp_path: Path) -> None:
    recorded = load_capture(PYTHIA)
    for rank, capture in enumerate([recorded, _planted_offset(recorded, "nvFusion2")]):
        (tmp_path / f"live.rank{rank}.json").write_text(dumps_capture(_as_rank(capture, rank, world=2)))
    described = _driver().describe_ranks(tmp_path)
    assert [(d["rank"], d["fusions"], d["device"], d["backend"]) for d in described] == [
        (0, 12, 0, "nccl"),
        (1, 12, 1, "nccl"),
    ]
    assert described[0]["offset_inputs"] == [] and described[1]["offset_inputs"] == ["nvFusion2[forward]"]
    assert described[0]["collectives"] == {} and described[0]["collectives_not_recorded"] == []
