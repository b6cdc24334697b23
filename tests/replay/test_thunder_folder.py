"""A folder Thunder's report functions wrote, read as a side of a diff: which script of each
nvFusion region is replayed and under which name, what is skipped and why, the benchmark script's
timing cut before it runs, and the bad folders, each refused in one line with nothing written.

The folders are built in the tests (``tests/thunder_folders.py``), mimicking Thunder 0.2.6's
writers; they were not recorded. Running a region's script needs a GPU: ``tests/gpu/test_replay.py``
replays the folder ``repro/thunder_report/record.py`` has Thunder write.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from fusiondiff.records.errors import ReplayError
from fusiondiff.replay.thunder_folder import (
    is_thunder_folder,
    read_thunder_folder,
    region_of,
    runnable_source,
)

sys.path.insert(0, str(Path(__file__).parent.parent))
from inprocess import notes  # noqa: E402
from thunder_folders import (  # noqa: E402
    FIGURES_US,
    REGIONS,
    benchmark_script,
    build_report_folder,
    build_repros_folder,
    tree,
)

REPO = Path(__file__).parent.parent.parent


@pytest.fixture(scope="module")
def thunder_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both of Thunder's folders (and its printed stream) built once for the module."""
    root = tmp_path_factory.mktemp("thunder")
    build_report_folder(root)
    build_repros_folder(root)
    return root


def _all_scripts(folder: Path) -> set[str]:
    return {str(folder / name) for name in tree(folder) if name.endswith(".py")}


def test_report_folder_one_nvfuser_script_per_region_in_nested_graph_folders(thunder_dir: Path) -> None:
    folder = read_thunder_folder(str(thunder_dir / "report"))
    assert [r.region for r in folder.regions] == sorted(REGIONS)
    # the WallTime benchmark of each region; its KernelTime twin runs the same fusion: skipped
    assert [Path(r.path).name for r in folder.regions] == [
        f"{region}_nvfuser_WallTime.py" for region in sorted(REGIONS)
    ]
    assert all(f"/graph{i}/nvfusion_reports/" in r.path for i, r in enumerate(folder.regions))
    # every script is either replayed or listed as skipped, once
    listed = [r.path for r in folder.regions] + [s.path for s in folder.skipped]
    assert sorted(listed) == sorted(_all_scripts(thunder_dir / "report"))


def test_other_backends_and_graph_scripts_are_skipped_each_with_its_reason(thunder_dir: Path) -> None:
    reasons = {Path(s.path).name: s.reason for s in read_thunder_folder(str(thunder_dir / "report")).skipped}
    region = "graph0_thunder_0_nvFusion0_forward"
    assert (
        reasons[f"{region}_torchcompile_WallTime.py"] == "the region under another backend (torch.compile), not nvFuser"
    )
    assert (
        reasons[f"{region}_nvfuser_KernelTime.py"] == f"the same region as {region}_nvfuser_WallTime.py, replayed once"
    )
    assert "thunder.jit" in reasons["graph0_thunder_0_thunder_KernelTime.py"]
    assert "inductor" in reasons["graph0_thunder_0_inductor_backend_KernelTime.py"]
    assert all("\n" not in reason for reason in reasons.values())


def test_repros_folder_replays_each_region_repro(thunder_dir: Path) -> None:
    folder = read_thunder_folder(str(thunder_dir / "repros"))
    assert [Path(r.path).name for r in folder.regions] == [f"{region}_repro_nvfuser.py" for region in sorted(REGIONS)]
    assert [Path(s.path).name for s in folder.skipped] == ["graph0_thunder_0.py", "graph1_thunder_0.py"]


def test_a_graph_folder_or_its_reports_folder_is_recognised(thunder_dir: Path) -> None:
    for path in (
        thunder_dir / "report",
        thunder_dir / "report" / "graph1",
        thunder_dir / "report" / "graph1" / "nvfusion_reports",
    ):
        assert is_thunder_folder(path), path
        assert [r.region for r in read_thunder_folder(str(path)).regions] == [
            "graph1_thunder_0_nvFusion0_forward"
        ] or path.name == "report"
    assert not is_thunder_folder(REPO / "tests" / "data" / "legacy_scripts")


def test_figures_from_the_stream_and_from_the_scripts_docstrings(thunder_dir: Path) -> None:
    from_scripts = read_thunder_folder(str(thunder_dir / "report")).figures
    from_stream = read_thunder_folder(str(thunder_dir / "report"), str(thunder_dir / "report.txt")).figures
    for figures in (from_scripts, from_stream):
        got = {(f.region, f.timer, f.executor): f.median_ns for f in figures}
        expected = {}
        for (region, timer), (torchcompile, nvfuser) in FIGURES_US.items():
            expected[(region, timer, "torchcompile")] = pytest.approx(torchcompile * 1e3)
            expected[(region, timer, "nvfuser")] = pytest.approx(nvfuser * 1e3)
        assert got == expected
    assert {f.source for f in from_stream} == {"report.txt"}  # the stream first, where both print a line
    assert all(f.source.endswith("_nvfuser_WallTime.py's docstring") or "KernelTime" in f.source for f in from_scripts)


def test_replayed_fusions_are_named_after_their_region() -> None:
    assert (
        region_of("x/graph3_thunder_2_nvFusion11_backward_nvfuser_KernelTime.py")
        == "graph3_thunder_2_nvFusion11_backward"
    )
    assert region_of("graph0_thunder_0_nvFusion0_forward_repro_nvfuser.py") == "graph0_thunder_0_nvFusion0_forward"
    assert region_of("graph0_thunder_0_nvFusion0_forward_torchcompile_WallTime.py") is None
    assert region_of("forward_nvFusion0.py") is None  # fusiondiff repro's own naming keeps <stem>:fusionN


def test_benchmark_script_runs_its_fusion_once_without_thunder_or_its_timer(
    thunder_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rewritten benchmark executed with stand-in torch and nvFuser modules (no Thunder module
    exists here): the fusion is built and executed once, on the script's inputs, and nothing times it."""
    script = (
        thunder_dir
        / "report"
        / "graph1"
        / "nvfusion_reports"
        / "graph1_thunder_0_nvFusion0_forward_nvfuser_KernelTime.py"
    )
    source = script.read_text()
    runnable = runnable_source(source, script)
    assert "thunder" not in runnable.split('"""')[0] and "measurement" not in runnable
    # line numbers kept: the inputs are made on the script's own line
    assert source.splitlines().index("inputs = [") == runnable.splitlines().index("inputs = [")
    executed: list[object] = []

    class FusionDefinition:
        def __enter__(self) -> FusionDefinition:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        ops = types.SimpleNamespace(relu=lambda *a, **k: "relu")

        def __getattr__(self, name: str) -> object:
            return lambda *a, **k: name

        def execute(self, inputs: object) -> None:
            executed.append(inputs)

    nvfuser_direct = types.ModuleType("nvfuser_direct")
    nvfuser_direct.FusionDefinition = FusionDefinition  # type: ignore[attr-defined]
    nvfuser_direct.DataType = types.SimpleNamespace(Float=0, BFloat16=1, Double=2)  # type: ignore[attr-defined]
    fake_torch = types.ModuleType("torch")
    fake_torch.float32 = "float32"  # type: ignore[attr-defined]
    fake_torch.testing = types.SimpleNamespace(make_tensor=lambda *a, **k: ("tensor", a))  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "nvfuser_direct", nvfuser_direct)
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    monkeypatch.setitem(sys.modules, "thunder", None)  # importing Thunder would fail
    exec(compile(runnable, str(script), "exec"), {"__name__": "__main__"})
    assert executed == [[("tensor", ((1024,),))]]


def test_other_scripts_run_unchanged(thunder_dir: Path) -> None:
    repro = next((thunder_dir / "repros").rglob("*_repro_nvfuser.py"))
    assert runnable_source(repro.read_text(), repro) == repro.read_text()
    bench = benchmark_script("graph0_thunder_0_nvFusion0_forward", "small", "WallTime")
    assert runnable_source(bench, "my_benchmark.py") == bench  # not named as Thunder names it
    ast.parse(runnable_source(bench, "graph0_thunder_0_nvFusion0_forward_nvfuser_WallTime.py"))


# --- the command line: bad folders, each one line, nothing written -------------------------------


def _replay(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "fusiondiff", "replay", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _refused(tmp_path: Path, folder: Path, expected: str) -> None:
    """``replay FOLDER -o out/replay.json`` exits 2 with one line naming ``expected``, writes nothing."""
    before = tree(folder)
    out = tmp_path / "out"
    out.mkdir()
    result = _replay([str(folder), "-o", str(out / "replay.json")], tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and expected in lines[0] and "Traceback" not in result.stderr, result.stderr
    assert list(out.iterdir()) == []
    assert tree(folder) == before


def test_a_script_named_as_thunders_but_not_thunders(tmp_path: Path) -> None:
    folder = tmp_path / "report" / "graph0" / "nvfusion_reports"
    folder.mkdir(parents=True)
    (folder / "graph0_thunder_0_nvFusion0_forward_nvfuser_WallTime.py").write_text("print('hello')\n")
    _refused(tmp_path, tmp_path / "report", "is named as Thunder names an nvFuser script but is not one")


@pytest.mark.parametrize("keep", [0.5, 0.97])
def test_a_truncated_script(tmp_path: Path, thunder_dir: Path, keep: float) -> None:
    """Cut mid-definition (not valid Python) or just before its timing (valid, but no execute)."""
    source = (thunder_dir / "report" / "graph0" / "nvfusion_reports").glob("*_nvfuser_WallTime.py")
    text = next(source).read_text()
    cut = text[: int(len(text) * keep)] if keep < 0.9 else text[: text.index("nvfuser_fn = fd.execute")]
    folder = tmp_path / "report" / "graph0" / "nvfusion_reports"
    folder.mkdir(parents=True)
    (folder / "graph0_thunder_0_nvFusion0_forward_nvfuser_WallTime.py").write_text(cut)
    _refused(tmp_path, tmp_path / "report", "truncated")


def test_a_folder_with_ten_thousand_scripts(tmp_path: Path) -> None:
    folder = tmp_path / "report" / "graph0" / "nvfusion_reports"
    folder.mkdir(parents=True)
    for i in range(10_000):
        (folder / f"graph0_thunder_0_nvFusion{i}_forward_nvfuser_WallTime.py").touch()
    _refused(tmp_path, tmp_path / "report", "more than 2000 files under it")


def test_a_symlink_loop_inside_the_folder_is_listed_not_followed(tmp_path: Path, thunder_dir: Path) -> None:
    report = tmp_path / "report"
    build_report_folder(tmp_path)
    (report / "graph0" / "loop").symlink_to("..")
    folder = read_thunder_folder(str(report))
    assert len(folder.regions) == 2
    assert [(Path(s.path).name, s.reason) for s in folder.skipped if "link" in s.reason] == [
        ("loop", "a symbolic link, not followed")
    ]


def test_a_folder_that_is_a_symlink_loop(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    out = tmp_path / "out"
    out.mkdir()
    result = _replay([str(tmp_path / "a"), "-o", str(out / "replay.json")], tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"fusiondiff replay: error: cannot read {tmp_path / 'a'}: Too many levels of symbolic links"
    ]
    assert list(out.iterdir()) == []


def test_no_region_in_a_thunder_folder(tmp_path: Path) -> None:
    folder = tmp_path / "report" / "graph0"
    folder.mkdir(parents=True)
    (folder / "graph0_thunder_0_thunder_WallTime.py").write_text("pass\n")
    _refused(tmp_path, tmp_path / "report", "a Thunder folder with no nvFuser script of an nvFusion region")


def test_output_inside_the_thunder_folder_is_refused(tmp_path: Path, thunder_dir: Path) -> None:
    before = tree(thunder_dir / "report")
    result = _replay([str(thunder_dir / "report"), "-o", str(thunder_dir / "report" / "replay.json")], tmp_path)
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1 and "inside the Thunder folder" in result.stderr
    assert tree(thunder_dir / "report") == before


def test_the_command_lists_regions_and_skipped_scripts_one_note_each(tmp_path: Path, thunder_dir: Path) -> None:
    """On this machine (no torch) the replay stops at its check for torch, after the folder is read
    and listed: one note for the folder, one per skipped script (each a line and the lines indented
    under it that fitting it to the width made), then the missing torch in one line."""
    report = thunder_dir / "report"
    out = tmp_path / "out"
    out.mkdir()
    result = _replay(
        [str(report), "-o", str(out / "replay.json"), "--thunder-stream", str(thunder_dir / "report.txt")], tmp_path
    )
    lines = _notes(result.stderr)
    assert lines[0] == f"fusiondiff: {report}: Thunder's folder, 2 nvFusion region(s) to replay"
    skipped = [line for line in lines if line.startswith("fusiondiff: skipped ")]
    assert len(skipped) == len(_all_scripts(report)) - 2
    if result.returncode != 0:  # no torch or nvFuser here: said in one more line, nothing written
        assert len(lines) == len(skipped) + 2 and "Traceback" not in result.stderr
        assert result.stderr.splitlines()[-1] == lines[-1]  # the error: one line, never wrapped
        assert list(out.iterdir()) == []


def _notes(stderr: str) -> list[str]:
    """stderr's notes, each with the lines indented 4 spaces under it (its continuation) joined to it."""
    return [" ".join([first, *(line.strip() for line in rest)]) for first, *rest in notes(stderr)]


def test_thunder_stream_without_a_thunder_folder(tmp_path: Path) -> None:
    script = REPO / "tests" / "data" / "h100" / "offset_thunderfx_4096" / "nvfuser_repro.py"
    stream = tmp_path / "report.txt"
    stream.write_text("")
    result = _replay([str(script), "-o", str(tmp_path / "r.json"), "--thunder-stream", str(stream)], tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "fusiondiff replay: error: --thunder-stream: give the Thunder report folder it was printed for"
    ]


def test_reading_a_bad_folder_raises_replay_error(tmp_path: Path) -> None:
    (tmp_path / "graph0").mkdir()
    with pytest.raises(ReplayError, match="no nvFuser script"):
        read_thunder_folder(str(tmp_path))


def test_every_kind_of_script_thunder_writes_beside_the_regions_has_its_reason(
    tmp_path: Path, thunder_dir: Path
) -> None:
    """File names of Thunder 0.2.6's other writers (fx_report's eager, thunder and torch.compile
    scripts, save_thunderfx_repros' traces, failing scripts), each skipped with its own reason."""
    graph = tmp_path / "report" / "graph0"
    reports = graph / "nvfusion_reports"
    reports.mkdir(parents=True)
    region = "graph0_thunder_0_nvFusion0_forward"
    source = thunder_dir / "repros" / "graph0" / "fusion_reports" / f"{region}_repro_nvfuser.py"
    (reports / f"{region}_repro_nvfuser.py").write_bytes(source.read_bytes())
    names = {
        "graph0_repro_eager.py": "an FX graph's script (eager), not one nvFusion region",
        "graph0_benchmark_torchcompile.py": "an FX graph's script (torch.compile), not one nvFusion region",
        "graph0_thunder_0_repro_thunder.py": "an FX graph's script (thunder.jit), not one nvFusion region",
        "graph0_thunder_0_fwd_trace.py": "a Thunder trace, not a script to run",
        "failed_graph0_thunder_1.py": "a script Thunder saved because it failed under Thunder, not an nvFuser region",
        "notes.py": "not a script Thunder's report functions write",
        f"nvfusion_reports/{region}_repro_inductor.py": "the region under another backend (inductor), not nvFuser",
        f"nvfusion_reports/{region}_benchmark_inductor.py": "the region under another backend (inductor), not nvFuser",
    }
    for name in names:
        (graph / name).write_text("pass\n")
    folder = read_thunder_folder(str(tmp_path / "report"))
    assert [r.region for r in folder.regions] == [region]
    assert {str(Path(s.path).relative_to(graph)): s.reason for s in folder.skipped} == names
