"""What the command line writes on stderr that is not an error (progress, warnings, ``wrote PATH``,
the lines relayed from a replay process) fits the width of stderr's terminal: ``COLUMNS``, else the
terminal's, 100 when stderr is none; continuation lines indented 4 spaces, a path never cut. An error
stays one line however long, as scripts and the batteries read it.

The Thunder folder is built by the test (``tests/thunder_folders.py``); it was not recorded."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fusiondiff.front.stdio import note, stderr_width
from fusiondiff.replay.child_process import _forward

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from inprocess import fusiondiff, notes  # noqa: E402
from thunder_folders import build_report_folder  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
LONG = "fusiondiff: " + " ".join(f"word{i}" for i in range(40))
"""A note of 12 + 40 words: 250 columns."""


def _said(monkeypatch: pytest.MonkeyPatch, columns: str | None, line: str) -> str:
    """What :func:`note` writes of ``line`` to a stderr that is a file, under ``COLUMNS``."""
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    note(line)
    return err.getvalue()


def test_a_long_note_wraps_at_60_columns_with_its_continuation_indented(monkeypatch):
    text = _said(monkeypatch, "60", LONG)
    lines = text.splitlines()
    assert len(lines) > 4 and max(len(line) for line in lines) <= 60, lines
    assert lines[0].startswith("fusiondiff: word0") and all(line.startswith("    word") for line in lines[1:]), lines
    assert " ".join(text.split()) == LONG  # every word, in order


def test_a_long_note_stays_whole_at_300_columns_and_100_when_stderr_is_no_terminal(monkeypatch):
    assert _said(monkeypatch, "300", LONG) == LONG + "\n"
    lines = _said(monkeypatch, None, LONG).splitlines()  # a StringIO: no terminal
    assert len(lines) == 3 and max(len(line) for line in lines) <= 100, lines


def test_a_path_longer_than_the_width_is_not_cut(monkeypatch):
    path = "/" + "/".join(["folder"] * 15) + "/replay.json"  # 107 characters, no space
    lines = _said(monkeypatch, "60", f"wrote {path}").splitlines()
    assert lines == ["wrote", f"    {path}"]


def test_the_width_of_stderr_is_decided_as_stdout_s(monkeypatch):
    monkeypatch.setattr(sys, "stderr", open(__file__))  # a file: not a terminal  # noqa: SIM115
    try:
        monkeypatch.delenv("COLUMNS", raising=False)
        assert stderr_width() == 100
        monkeypatch.setenv("COLUMNS", "60")
        assert stderr_width() == 60
        monkeypatch.setenv("COLUMNS", "10")
        assert stderr_width() == 40  # below it no line reads
    finally:
        sys.stderr.close()


def test_the_command_s_notes_wrap_and_its_error_stays_one_line(tmp_path: Path):
    """``replay`` of a Thunder folder says the folder and each skipped script in a note, then (no
    torch here) stops with an error: at COLUMNS=60 every note fits 60 columns (but a path longer
    than that), the error is one line over 60; at COLUMNS=300 each note is one line."""
    root = tmp_path / "t"
    root.mkdir()
    build_report_folder(root)
    out = tmp_path / "out"
    out.mkdir()
    runs = {}
    for columns in ("60", "300"):
        runs[columns] = subprocess.run(
            [sys.executable, "-m", "fusiondiff", "replay", str(root / "report"), "-o", str(out / "replay.json")],
            env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": columns},
            capture_output=True,
            text=True,
            timeout=120,
        )
    narrow, wide = runs["60"], runs["300"]
    if narrow.returncode == 0:
        pytest.skip("torch and nvFuser are installed: the replay ran, and this test wants its error")
    assert narrow.returncode == wide.returncode == 2 and "Traceback" not in narrow.stderr, narrow.stderr
    *said, error = notes(narrow.stderr)
    assert len(error) == 1 and error[0].startswith("fusiondiff replay: error: ") and len(error[0]) > 60, error
    lines = [line for note_lines in said for line in note_lines]
    # a line over 60 columns is a word (a path) longer than the width, alone on its line, whole
    assert said and all(len(line) <= 60 or len(line.split()) == 1 for line in lines), said
    assert any(len(line.split()) > 1 for line in lines[1:])  # the width was used, not only for paths
    assert any(len(note_lines) > 1 for note_lines in said)  # the folder's note did wrap
    assert said[0][0].startswith("fusiondiff:") and all(line.startswith("    ") for line in said[0][1:])
    # the same notes, each on one line, at 300 columns; the same words either way
    assert len(wide.stderr.splitlines()) == len(said) + 1
    assert wide.stderr.splitlines()[-1] == error[0]
    assert " ".join(wide.stderr.split()) == " ".join(narrow.stderr.split())


def test_a_long_error_of_an_in_process_command_is_one_line(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    missing = tmp_path / ("a_long_missing_name_" * 5) / "nope.json"
    run = fusiondiff("show", missing)
    assert run.returncode == 2
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("fusiondiff show: error: ") and len(lines[0]) > 60, lines


def test_show_s_note_follows_the_width(monkeypatch):
    capture = DATA / "roundtrip_deep" / "live.json.gz"
    monkeypatch.setenv("COLUMNS", "40")
    run = fusiondiff("show", capture, "--top", "1")
    assert run.returncode == 0
    lines = run.stderr.splitlines()
    assert len(lines) == 2 and lines[1].startswith("    ") and max(len(line) for line in lines) <= 40, lines
    assert " ".join(run.stderr.split()) == "fusiondiff show: 1 of 530 fusion(s) shown"


def test_a_replay_process_s_lines_go_to_the_relay_whole():
    """The parent relays the child's ``fusiondiff`` lines, each whole and without its newline, to
    where the command writes its notes; the rest stays in the log; a relay that cannot write does
    not stop the reading (the child would block on a full pipe)."""
    child = f"{LONG}\nthe script's own output\r\nfusiondiff: done\r\n".encode()
    log, relayed, seen = io.BytesIO(), [], []
    _forward(io.BytesIO(child), log, seen.append, None, relayed.append)
    assert relayed == [LONG, "fusiondiff: done"] and log.getvalue() == child

    def broken(line: str) -> None:
        raise OSError("stderr is gone")

    seen.clear()
    _forward(io.BytesIO(child), io.BytesIO(), seen.append, None, broken)
    assert len(seen) == 3


def test_the_round_trip_relays_its_processes_lines_to_its_progress(tmp_path: Path, monkeypatch):
    """The command's progress (its notes) is where the round trip's replay processes' lines go;
    a round trip given none leaves them to stderr as they come, as before; a Slurm task, which
    has no such callback, writes them to its log as they come."""
    from fusiondiff import roundtrip as rt
    from fusiondiff.io.store import load_capture
    from fusiondiff.roundtrip.replays import ChildReplays

    from roundtrip.test_round_trip import FakeReplay

    live = DATA / "fidelity" / "pythia" / "live.json"
    asked: list[object] = []

    def fake_child(*args: object, relay: object = None, **kwargs: object) -> FakeReplay:
        asked.append(relay)
        return FakeReplay(load_capture(live))

    monkeypatch.setattr(rt.run, "replay_in_child", fake_child)
    lines: list[str] = []
    rt.roundtrip(live, tmp_path / "a", devices=[None], progress=lines.append)
    rt.roundtrip(live, tmp_path / "b", devices=[None])
    assert asked == [lines.append, None]
    replays = ChildReplays(relay=lines.append)
    assert replays.__getstate__()["relay"] is None and replays.relay == lines.append


def test_a_replay_s_child_lines_go_to_its_progress_or_its_relay(tmp_path: Path, monkeypatch):
    from fusiondiff.replay import child, runner

    script = tmp_path / "s.py"
    script.write_text("pass\n")
    relays: list[object] = []

    def fake_run_child(*args: object, relay: object = None, **kwargs: object) -> child.ReplayOutcome:
        relays.append(relay)
        return child.ReplayOutcome(status="ok", written=str(tmp_path / "out.json"))

    monkeypatch.setattr(runner, "_run_child", fake_run_child)
    monkeypatch.setattr(runner.live_side, "require", lambda command, needs=(): None)  # torch and nvFuser: faked
    said: list[str] = []
    for kwargs in ({"progress": said.append}, {"progress": said.append, "relay": print}, {}):
        runner.replay_scripts([str(script)], output=str(tmp_path / "out.json"), **kwargs)
    assert relays == [said.append, print, None]
