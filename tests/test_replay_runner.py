"""The replay runner's timeout and process-group handling, with fake children (tiny Python
scripts in place of the replay child; no torch, nvFuser or GPU), and a replay started ahead of its
turn, with the real child module (it imports torch where installed; no nvFuser or GPU needed)."""

from __future__ import annotations

import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from fusiondiff.errors import ReplayError
from fusiondiff.replay import runner

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX")

SLEEPER = """\
import time
time.sleep(60)
"""

PARENT_OF_A_STUBBORN_GRANDCHILD = """\
import signal, subprocess, sys, time
# the grandchild ignores SIGTERM, so only the runner's SIGKILL of the whole group stops it
grandchild = subprocess.Popen(
    [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"]
)
open(sys.argv[1], "w").write(str(grandchild.pid))
time.sleep(60)
"""


def _gone(pid: int, within_s: float = 10.0) -> bool:
    """The process has exited (a zombie waiting for its reaper counts as gone)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        except OSError:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return True
            state = "?"
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def _run_fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str, *args: str):
    fake = tmp_path / "fake_child.py"
    fake.write_text(textwrap.dedent(script))
    started: list[int] = []
    messages: list[str] = []
    monkeypatch.setattr(runner, "GRACE_S", 5.0)

    def command(params: dict) -> list[str]:
        assert "status" in params and params["log"] == "replay.log"
        return [sys.executable, str(fake), *args]

    real_popen = runner.subprocess.Popen

    def popen(*a, **k):  # noqa: ANN002, ANN003
        proc = real_popen(*a, **k)
        started.append(proc.pid)
        return proc

    monkeypatch.setattr(runner.subprocess, "Popen", popen)
    t0 = time.monotonic()
    outcome = runner._run_child({"scripts": []}, 1.0, messages.append, tmp_path / "replay.log", command=command)
    return outcome, started, messages, time.monotonic() - t0


def test_a_child_past_the_timeout_is_stopped_and_the_outcome_says_timeout(tmp_path, monkeypatch):
    outcome, started, messages, took = _run_fake(tmp_path, monkeypatch, SLEEPER)
    assert outcome.status == "timeout"
    assert "ran past 1 s" in outcome.message and "nothing was recorded" in outcome.message
    assert messages == ["fusiondiff: the script ran past 1 s; stopping it"]
    assert _gone(started[0])
    assert took < 30  # SIGTERM stopped it: the grace period was not needed


def test_a_grandchild_that_ignores_sigterm_is_killed_with_the_group(tmp_path, monkeypatch):
    pid_file = tmp_path / "grandchild.pid"
    outcome, started, _, _ = _run_fake(tmp_path, monkeypatch, PARENT_OF_A_STUBBORN_GRANDCHILD, str(pid_file))
    assert outcome.status == "timeout"
    assert _gone(started[0])
    assert _gone(int(pid_file.read_text()))


def test_the_real_child_command_runs_the_replay_child_module():
    command = runner.child_command({"scripts": ["a.py"], "status": "s.json"})
    assert command[:3] == [sys.executable, "-m", "fusiondiff.replay.child"]
    assert '"scripts": ["a.py"]' in command[3]


def _marking_script(tmp_path: Path) -> tuple[Path, Path]:
    """A script that runs no fusion and leaves a marker file when it runs."""
    marker = tmp_path / "ran"
    script = tmp_path / "marks.py"
    script.write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    return script, marker


def _wait_for_line(log: Path, text: str, within_s: float = 60.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if log.exists() and text in log.read_text():
            return True
        time.sleep(0.05)
    return False


PREPARED = "waiting for its turn"


def test_a_replay_started_ahead_runs_nothing_until_its_turn(tmp_path):
    """The real child module, gated: it prepares and says so in its log, then waits; the script
    runs (and the replay reports) only after ``run``. What it reports depends on the machine:
    without torch or nvFuser, that one is missing; with both, that the script executed no fusion."""
    script, marker = _marking_script(tmp_path)
    pending = runner.start_replay([str(script)], output=str(tmp_path / "replay.json"))
    proc = pending._child._proc
    assert _wait_for_line(tmp_path / "replay.log", PREPARED)
    time.sleep(0.5)
    assert proc.poll() is None and not marker.exists()
    with pytest.raises(ReplayError, match="executed no fusion|nvFuser is not importable|No module named 'torch'"):
        pending.run()
    assert _gone(proc.pid)


def test_a_replay_started_ahead_and_cancelled_runs_nothing_and_leaves_no_process(tmp_path):
    script, marker = _marking_script(tmp_path)
    pending = runner.start_replay([str(script)], output=str(tmp_path / "replay.json"))
    proc = pending._child._proc
    assert _wait_for_line(tmp_path / "replay.log", PREPARED)
    pending.cancel()
    assert _gone(proc.pid) and not marker.exists()
    assert not (tmp_path / "replay.json").exists()


def test_a_bad_script_is_refused_before_any_process_starts_ahead(tmp_path, monkeypatch):
    started = []
    monkeypatch.setattr(runner.subprocess, "Popen", lambda *a, **k: started.append(a))
    with pytest.raises(ReplayError, match="no such file"):
        runner.start_replay([str(tmp_path / "missing.py")], output=str(tmp_path / "replay.json"))
    assert not started
