"""Every text a command prints on stdout wraps to ``COLUMNS`` or the terminal's width (100 when
piped or unknown): ``report``'s text (22 of 52 lines were over 100 columns, the widest 304),
``timers`` (widest 212) and ``ranks`` (233); ``COLUMNS=80`` got 100."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from inprocess import fusiondiff  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data"
COMMANDS = {
    "report": ("report", DATA / "fidelity" / "llama3" / "live.json", DATA / "fidelity" / "llama3" / "replay.json"),
    "timers": (
        "timers",
        DATA / "timers" / "seed_train_step" / "kineto.json",
        DATA / "timers" / "seed_train_step" / "nvfuser.json",
    ),
    "ranks": ("ranks", DATA / "multigpu" / "planted"),
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
@pytest.mark.parametrize("columns", [None, "80", "132"])
def test_the_output_wraps_to_the_width_and_keeps_every_word(name, columns, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    wide = fusiondiff(*COMMANDS[name], "--format", "text") if name == "report" else None
    if columns is not None:
        monkeypatch.setenv("COLUMNS", columns)
    run = fusiondiff(*COMMANDS[name])
    width = 100 if columns is None else int(columns)
    lines = run.stdout.splitlines()
    assert lines and max(len(line) for line in lines) <= width, max(lines, key=len)
    if columns == "132":
        assert max(len(line) for line in lines) > 100  # the width is used, not 100 again
    if wide is not None:  # the same words as the report laid out for 100 columns
        assert " ".join(run.stdout.split()) == " ".join(wide.stdout.split())


def test_a_report_written_to_a_file_is_not_wrapped(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    out = tmp_path / "r.txt"
    assert fusiondiff(*COMMANDS["report"], "-o", out).returncode == 0
    assert max(len(line) for line in out.read_text().splitlines()) > 100
