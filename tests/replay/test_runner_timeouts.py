"""The replay runner's timeout and process-group handling, with fake children (tiny Python
scripts in place of the replay child; no torch, nvFuser or GPU), and a replay started ahead of its
turn, with the real child module (it imports torch where installed; no nvFuser or GPU needed)."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from fusiondiff.records.errors import ReplayError
from fusiondiff.replay import child_process, runner, stages

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
    monkeypatch.setattr(child_process, "GRACE_S", 5.0)

    def command(params: dict) -> list[str]:
        assert "status" in params and params["log"] == "replay.log"
        return [sys.executable, str(fake), *args]

    real_popen = child_process.subprocess.Popen

    def popen(*a, **k):  # noqa: ANN002, ANN003
        proc = real_popen(*a, **k)
        started.append(proc.pid)
        return proc

    monkeypatch.setattr(child_process.subprocess, "Popen", popen)
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
    monkeypatch.setattr(child_process.subprocess, "Popen", lambda *a, **k: started.append(a))
    with pytest.raises(ReplayError, match="no such file"):
        runner.start_replay([str(tmp_path / "missing.py")], output=str(tmp_path / "replay.json"))
    assert not started


GATED_CHILD = """\
import json, sys
from fusiondiff.replay.stages import Gates
params = json.loads(sys.argv[1])
journal = open(params["journal"], "a")
gates = Gates(params["gate"], params["nonce"])
gates.wait_to_prepare()
journal.write("gpu:prepare\\n"); journal.flush()  # stands for the context, the scripts, the profiler
gates.prepared()
gates.wait_to_time()
if params["gate"] == "context":
    journal.write("gpu:compile\\n"); journal.flush()  # stands for the scripts run in its turn
    gates.wait_to_sample()
journal.write("gpu:samples\\n"); journal.flush()
gates.timed()
open(params["status"], "w").write(json.dumps({"status": "error", "message": "a fake child"}))
"""


def _gated_fake(tmp_path: Path, gate: str = "gpu") -> tuple[runner.ChildReplay, Path]:
    """A fake child that takes its turns as the real one does (stages.Gates) and notes each phase
    that would touch the GPU in a journal."""
    code, journal = tmp_path / "gated_child.py", tmp_path / "journal"
    code.write_text(GATED_CHILD)
    child = runner.ChildReplay(
        {"journal": str(journal)},
        tmp_path / "replay.log",
        command=lambda params: [sys.executable, str(code), json.dumps(params)],
        gate=gate,
    )
    return child, journal


def _wait_for_stage(child: runner.ChildReplay, stage: str, within_s: float = 30.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if child.stage() == stage:
            return True
        time.sleep(0.02)
    return False


def _journal(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def test_a_child_gated_at_the_gpu_touches_it_only_when_told_to_prepare_and_times_only_on_go(tmp_path):
    child, journal = _gated_fake(tmp_path)
    assert _wait_for_stage(child, stages.IMPORTED)
    time.sleep(0.3)
    assert _journal(journal) == [] and child.stage() == stages.IMPORTED  # imported: nothing on the GPU
    child.prepare()
    assert _wait_for_stage(child, stages.PREPARED)
    time.sleep(0.3)
    assert _journal(journal) == ["gpu:prepare"]  # prepared: no sample before go
    child.go()
    outcome = child.wait(30, lambda m: None)
    assert _journal(journal) == ["gpu:prepare", "gpu:samples"]
    assert outcome.message == "a fake child" and child.stage() == stages.ENDED
    assert "timed; timing done" in (tmp_path / "replay.log").read_text()


def test_go_alone_lets_a_child_gated_at_the_gpu_prepare_and_time(tmp_path):
    child, journal = _gated_fake(tmp_path)
    assert _wait_for_stage(child, stages.IMPORTED)
    child.go()  # PendingReplay.run() on a replay nobody prepared
    child.wait(30, lambda m: None)
    assert _journal(journal) == ["gpu:prepare", "gpu:samples"]


def test_a_child_gated_at_the_gpu_and_cancelled_while_prepared_never_samples(tmp_path):
    child, journal = _gated_fake(tmp_path)
    assert _wait_for_stage(child, stages.IMPORTED)
    child.prepare()
    assert _wait_for_stage(child, stages.PREPARED)
    pid = child._proc.pid
    child.cancel()
    assert _gone(pid) and _journal(journal) == ["gpu:prepare"]


def test_a_script_cannot_pass_for_the_child_telling_its_stage(tmp_path):
    """Stages are read only from lines with the child's own random nonce."""
    child, _ = _gated_fake(tmp_path)
    child._seen("replay child 0000: prepared; a script printing this\n")
    assert child.stage() in (stages.STARTING, stages.IMPORTED)
    child.cancel()


def test_the_real_child_gated_at_the_gpu_runs_nothing_before_prepare_and_writes_its_phases(tmp_path):
    script, marker = _marking_script(tmp_path)
    output = tmp_path / "replay.json"
    pending = runner.start_replay([str(script)], output=str(output), gate="gpu", phases=True)
    assert _wait_for_line(tmp_path / "replay.log", "waiting for its turn to prepare on the GPU")
    time.sleep(0.5)
    assert pending.stage() == stages.IMPORTED and not marker.exists()
    with pytest.raises(ReplayError):  # without a GPU here: no torch, or no CUDA device
        pending.run()
    phases = json.loads((tmp_path / "replay.phases.json").read_text())
    names = [p["name"] for p in phases["phases"]]
    assert names[:2] == ["imports", "wait_to_prepare"] and phases["spawned_at"] <= phases["entered_at"]
    assert "replay child: phases (s): interpreter" in (tmp_path / "replay.log").read_text()


class _JournalRecorder:
    """Stands for the recorder in :func:`run_replay`: notes when it is installed and when the
    samples would be taken; it records nothing (the replay then says no fusion ran)."""

    journal: list[str] = []

    def __init__(self, *args, **kwargs):
        self.warnings, self.name_prefix, self.context_lost = [], "", None
        self.fusion_count, self.errors, self.tensors = 0, [], None

    def install(self):
        self.journal.append("recorder")

    def uninstall(self):
        pass

    def finish(self):
        self.journal.append("samples")
        from fusiondiff.records.errors import CaptureError

        raise CaptureError("nothing recorded")


def _journalled_replay(tmp_path, monkeypatch) -> tuple[Any, list[str], Path]:
    """:mod:`fusiondiff.replay.child` with its imports, context, profiler start, script and recorder
    replaced by entries in a journal (the profiler's start-up ends only once the script ran: the
    script must not wait for it); the module, the journal and a script to replay."""
    from fusiondiff.replay import child, process_setup

    journal: list[str] = []
    _JournalRecorder.journal = journal
    monkeypatch.setattr(process_setup, "import_frontends", lambda profiler: journal.append("imports"))
    monkeypatch.setattr(
        process_setup, "cuda_devices", lambda device, create_context: (journal.append("context"), (1, 0))[1]
    )
    script_ran = threading.Event()

    def profiler(options):
        assert script_ran.wait(timeout=10)
        journal.append("profiler")

    def script(script, code):
        journal.append("script")
        script_ran.set()

    monkeypatch.setattr(process_setup, "open_profiler_once", profiler)
    monkeypatch.setattr(child, "recorder_class", lambda options: _JournalRecorder)
    monkeypatch.setattr(child, "_run_one", script)
    script_path = tmp_path / "repro.py"
    script_path.write_text("x = 1\n")
    return child, journal, script_path


@pytest.mark.parametrize(
    ("scripts_in_turn", "expected"),
    [
        # gated at the GPU: the script runs (nvFuser compiles) in the preparation, before the gate
        (False, ["imports", "context", "recorder", "script", "profiler", "prepared", "gate", "samples"]),
        # gated at the context: only the context before the gate, the profiler's start-up in a thread
        # (here it ends only once the script ran: the script does not wait for it); its samples wait
        # for it and then for their turn
        (True, ["imports", "context", "gate", "recorder", "script", "profiler", "prepared", "hold", "samples"]),
    ],
)
def test_a_replay_gated_at_the_context_runs_its_scripts_only_after_its_turn_came(
    tmp_path, monkeypatch, scripts_in_turn, expected
):
    child, journal, script = _journalled_replay(tmp_path, monkeypatch)
    outcome = child.run_replay(
        [str(script)],
        str(tmp_path / "replay.json"),
        wait_to_time=lambda: journal.append("gate"),
        wait_to_sample=(lambda: journal.append("hold")) if scripts_in_turn else None,
        on_prepared=lambda: journal.append("prepared"),
    )
    assert journal == expected
    assert outcome.status == "error" and not (tmp_path / "replay.json").exists()


def test_a_replay_gated_at_its_imports_does_in_its_turn_what_the_reference_does(tmp_path, monkeypatch):
    from fusiondiff.replay.phases import PhaseLog

    child, journal, script = _journalled_replay(tmp_path, monkeypatch)
    phases = PhaseLog()
    child.run_replay(
        [str(script)], str(tmp_path / "replay.json"), wait_to_prepare=lambda: journal.append("turn"), phases=phases
    )
    # nothing on the GPU before its turn; then context, script and samples, whose window starts the
    # profiler, as in the reference (no window opened before: see child.run_replay)
    assert journal == ["imports", "turn", "context", "recorder", "script", "samples"]
    assert "profiler_init" not in phases.seconds() and "wait_to_time" not in phases.seconds()
    (tmp_path / "reference").mkdir()
    child, reference, script = _journalled_replay(tmp_path / "reference", monkeypatch)
    child.run_replay([str(script)], str(tmp_path / "reference" / "replay.json"))  # no gate: the reference
    assert reference == [entry for entry in journal if entry != "turn"]


@pytest.mark.parametrize(("timer", "profiler_imports"), [("kineto", True), ("nvfuser", False)])
def test_a_replay_imports_what_the_profilers_first_window_would_only_where_torch_profiler_times(
    tmp_path, monkeypatch, timer, profiler_imports
):
    from fusiondiff.records.options import RecordingOptions
    from fusiondiff.replay import process_setup

    child, _, script = _journalled_replay(tmp_path, monkeypatch)
    asked: list[bool] = []
    monkeypatch.setattr(process_setup, "import_frontends", lambda profiler: asked.append(profiler))
    monkeypatch.setattr(process_setup, "open_profiler_once", lambda options: None)
    options = RecordingOptions().with_timer(timer)
    child.run_replay([str(script)], str(tmp_path / "replay.json"), options=options)
    # torch.profiler's first window imports torch._inductor (1.4-2.3 s on the H200): imported with
    # torch, never where torch.profiler does not run
    assert asked == [profiler_imports]


def test_a_child_gated_at_the_context_compiles_in_its_turn_and_samples_only_when_told(tmp_path):
    child, journal = _gated_fake(tmp_path, gate="context")
    assert _wait_for_stage(child, stages.IMPORTED)
    child.prepare()
    assert _wait_for_stage(child, stages.PREPARED)
    child.start_turn()
    assert _wait_for_stage(child, stages.COMPILED)
    time.sleep(0.3)
    assert _journal(journal) == ["gpu:prepare", "gpu:compile"]  # compiled: no sample before sample()
    child.sample()
    child.wait(30, lambda m: None)
    assert _journal(journal) == ["gpu:prepare", "gpu:compile", "gpu:samples"]
    log = (tmp_path / "replay.log").read_text()
    assert "waiting for its turn to run its scripts and time" in log and "waiting for its turn to sample" in log


def test_go_alone_lets_a_child_gated_at_the_context_do_everything(tmp_path):
    child, journal = _gated_fake(tmp_path, gate="context")
    assert _wait_for_stage(child, stages.IMPORTED)
    child.go()  # PendingReplay.run() on a replay nobody prepared
    child.wait(30, lambda m: None)
    assert _journal(journal) == ["gpu:prepare", "gpu:compile", "gpu:samples"]


def test_start_turn_lets_a_child_gated_at_the_gpu_wait_for_sample(tmp_path):
    child, journal = _gated_fake(tmp_path, gate="gpu")
    assert _wait_for_stage(child, stages.IMPORTED)
    child.prepare()
    assert _wait_for_stage(child, stages.PREPARED)
    child.start_turn()  # its samples would follow its go at once: nothing is sent yet
    time.sleep(0.3)
    assert child.stage() == stages.PREPARED and _journal(journal) == ["gpu:prepare"]
    child.sample()
    child.wait(30, lambda m: None)
    assert _journal(journal) == ["gpu:prepare", "gpu:samples"]


def test_a_replay_started_ahead_runs_for_its_timeout_or_for_what_its_turn_has_left():
    from fusiondiff.replay.child import ReplayOutcome

    waited: list[float] = []

    class Child:
        def go(self):
            pass

        def wait(self, timeout_s, progress):
            waited.append(timeout_s)
            return ReplayOutcome(status="ok", written="r.json")

    pending = runner.PendingReplay(Child(), 900.0, lambda m: None)  # type: ignore[arg-type]
    assert pending.run() == Path("r.json") and pending.run(2.5) == Path("r.json")
    assert waited == [900.0, 2.5]
