"""The zoo runs each side of a scenario in a process of its own (repro/zoo/common.py, SIDES): the
entry point runs the one side it is given, and refuses a side it does not know."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from repro.zoo import common, run_zoo


def _main(monkeypatch, argv: list[str]) -> list[str]:
    ran: list[str] = []
    monkeypatch.setattr(sys, "argv", ["scenario", *argv])
    common.scenario_main(
        lambda out: ran.append(f"live {out.name}"), lambda out: ran.append(f"reconstructed {out.name}")
    )
    return ran


def test_each_side_runs_alone(tmp_path, monkeypatch):
    assert _main(monkeypatch, [str(tmp_path / "s"), "live"]) == ["live s"]
    assert _main(monkeypatch, [str(tmp_path / "s"), "reconstructed"]) == ["reconstructed s"]
    assert (tmp_path / "s").is_dir()


def test_an_unknown_side_is_refused(tmp_path, monkeypatch):
    with pytest.raises(SystemExit, match="unknown side 'both': live or reconstructed"):
        _main(monkeypatch, [str(tmp_path), "both"])


def test_record_starts_the_live_side_then_the_reconstructed_one_each_in_its_own_process(tmp_path, monkeypatch):
    calls: list[list[str]] = []

    def fake_run(args, **_):
        calls.append(args[1:])
        return subprocess.CompletedProcess(args, 0, "", "")

    monkeypatch.setattr(run_zoo.subprocess, "run", fake_run)
    assert run_zoo.record("control", tmp_path) is None
    out = str(tmp_path / "control")
    assert calls == [["-m", "repro.zoo.control", out, "live"], ["-m", "repro.zoo.control", out, "reconstructed"]]


def test_a_failed_side_is_named_in_the_error(tmp_path, monkeypatch):
    def fake_run(args, **_):
        failed = args[-1] == "reconstructed"
        return subprocess.CompletedProcess(args, 1 if failed else 0, "", "KeyError: 'script'" if failed else "")

    monkeypatch.setattr(run_zoo.subprocess, "run", fake_run)
    assert run_zoo.record("wrapper_several_definitions", Path(tmp_path)) == "reconstructed: KeyError: 'script'"
