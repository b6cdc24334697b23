"""The multi-GPU scripts and their driver (repro/multigpu) without a GPU: each session the driver runs
passes its script options that script accepts, the scripts import what parallel.py defines, the
driver keeps NVLink multicast off and reads rank files (built here from the recorded Pythia step,
rank 1 SYNTHETIC with a planted offset, as in tests/diff/test_ranks.py)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from fusiondiff.io.store import dumps_capture, load_capture

from diff.test_ranks import _as_rank, _planted_offset

MULTIGPU = Path(__file__).parent.parent / "repro" / "multigpu"
PYTHIA = Path(__file__).parent / "data" / "fidelity" / "pythia" / "live.json"


def _driver():
    spec = importlib.util.spec_from_file_location("check_multigpu", MULTIGPU / "check_multigpu.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPTS = ["train_ddp.py", "train_fsdp.py", "train_thunder_dist.py"]


def _options(script: Path) -> dict[str, tuple[str, ...] | None]:
    """The options ``script`` accepts (its own and ``parallel.arguments``'), each with its literal
    choices (None: any value, or a flag), read from the source: the scripts need torch to run."""
    options: dict[str, tuple[str, ...] | None] = {}
    for path in (script, MULTIGPU / "parallel.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or not node.args or not isinstance(node.args[0], ast.Constant):
                continue
            if isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
                choices = next((kw.value for kw in node.keywords if kw.arg == "choices"), None)
                options[node.args[0].value] = ast.literal_eval(choices) if isinstance(choices, ast.Tuple) else None
    for node in ast.walk(ast.parse(script.read_text())):  # parallel.arguments(description, orders)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "arguments":
            options["--order"] = ast.literal_eval(node.args[1])
    return options


@pytest.mark.parametrize("session", sorted(_driver().SESSIONS))
def test_every_session_of_the_driver_runs_a_script_with_options_it_accepts(session: str) -> None:
    script, argv = _driver().SESSIONS[session]
    assert script in SCRIPTS
    options = _options(MULTIGPU / script)
    for i, token in enumerate(argv):
        if not token.startswith("--"):
            continue
        assert token in options, f"{script} has no option {token}"
        value = argv[i + 1] if i + 1 < len(argv) and not argv[i + 1].startswith("--") else None
        if options[token] is not None:
            assert value in options[token], f"{script} {token}: {value!r} is not one of {options[token]}"


@pytest.mark.parametrize("name", SCRIPTS)
def test_what_the_scripts_import_from_parallel_is_there(name: str) -> None:
    tree = ast.parse((MULTIGPU / "parallel.py").read_text())
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    imported = {
        alias.name
        for node in ast.parse((MULTIGPU / name).read_text()).body
        if isinstance(node, ast.ImportFrom) and node.module == "parallel"
        for alias in node.names
    }
    assert imported and imported <= defined, imported - defined


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
