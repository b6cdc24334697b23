"""The round trip's note on replay processes that will import torch from its sources: the
environment forbids writing bytecode (``PYTHONDONTWRITEBYTECODE``) and none is there to read. A
package made here stands in for torch, with and without its bytecode."""

from __future__ import annotations

import importlib.util
import py_compile
from pathlib import Path

import pytest

from fusiondiff import roundtrip as rt
from fusiondiff.io.store import load_capture
from fusiondiff.replay.process_setup import uncompiled_imports

PYTHIA = Path(__file__).parent.parent / "data" / "fidelity" / "pythia"


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A package, ``fd_bytecode_probe``, found on sys.path with no bytecode."""
    root = tmp_path / "site"
    (root / "fd_bytecode_probe").mkdir(parents=True)
    (root / "fd_bytecode_probe" / "__init__.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    return "fd_bytecode_probe"


def test_no_bytecode_allowed_and_none_there_is_said_with_what_to_do(package: str) -> None:
    note = uncompiled_imports({"PYTHONDONTWRITEBYTECODE": "1"}, module=package)
    assert note is not None
    assert note.startswith(f"PYTHONDONTWRITEBYTECODE is set and {package} has no bytecode here")
    assert "unset it" in note and "PYTHONPYCACHEPREFIX" in note


def test_nothing_is_said_when_the_processes_may_write_their_bytecode(package: str) -> None:
    assert uncompiled_imports({}, module=package) is None
    assert uncompiled_imports({"PYTHONDONTWRITEBYTECODE": ""}, module=package) is None


def test_nothing_is_said_when_the_bytecode_is_there_to_read(package: str) -> None:
    origin = importlib.util.find_spec(package).origin
    py_compile.compile(origin, cfile=importlib.util.cache_from_source(origin), doraise=True)
    assert uncompiled_imports({"PYTHONDONTWRITEBYTECODE": "1"}, module=package) is None


def test_nothing_is_said_of_a_module_not_installed() -> None:
    assert uncompiled_imports({"PYTHONDONTWRITEBYTECODE": "1"}, module="fd_no_such_module_here") is None


def test_the_round_trip_says_it_once_before_its_replays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fusiondiff.replay import process_setup

    from roundtrip.test_round_trip import FakeReplay

    fake = FakeReplay(load_capture(PYTHIA / "live.json"))
    monkeypatch.setattr(rt.run, "replay_in_child", lambda *args, **kwargs: fake)
    monkeypatch.setattr(process_setup, "uncompiled_imports", lambda: "the reason, and what to do")
    lines: list[str] = []
    rt.roundtrip(PYTHIA / "live.json", tmp_path / "rt", devices=[None], progress=lines.append)
    notes = [line for line in lines if "note:" in line]
    assert notes == ["fusiondiff roundtrip: note: the reason, and what to do"]
    assert lines.index(notes[0]) < next(i for i, line in enumerate(lines) if "done" in line)
    # a rerun with every replay kept runs no replay process: nothing to say
    lines.clear()
    rt.roundtrip(PYTHIA / "live.json", tmp_path / "rt", devices=[None], progress=lines.append)
    assert not [line for line in lines if "note:" in line]
