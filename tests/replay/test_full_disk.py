"""A full disk under a replay (issue #40): the log the child's output is copied to, the phases
file and the outcome the child writes. Each failure is one line; no reader-thread traceback, no
half-written file, and the replay's outcome still reaches the parent. A real full device
(``/dev/full``: every write is ENOSPC) where a path can point to one, a fake otherwise; no torch,
nvFuser or GPU."""

from __future__ import annotations

import errno
import io
import json
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from fusiondiff.records.errors import OutputError
from fusiondiff.replay import child, child_process, runner
from fusiondiff.replay.phases import PhaseLog

pytestmark = pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")

CHATTY_CHILD = textwrap.dedent(
    """\
    import json, sys
    params = json.loads(sys.argv[1])
    for i in range(20000):  # 400 KB: well past a pipe's buffer, so an unread pipe would block it
        print(f"the script's line {i:05d}", flush=True)
    print("fusiondiff: a progress line", flush=True)
    open(params["status"], "w").write(json.dumps({"status": "ok", "message": "done", "fusions": 3}))
    """
)


class _FullLog(io.BytesIO):
    def write(self, data: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")


@pytest.fixture
def thread_tracebacks(monkeypatch: pytest.MonkeyPatch) -> list[BaseException]:
    seen: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: seen.append(args.exc_value))
    return seen


def test_the_reader_keeps_a_log_write_error_and_reads_on():
    lines, failures = [], []
    stream = io.BytesIO(b"one\nreplay child 1: imported\nfusiondiff: shown\nlast\n")
    child_process._forward(stream, _FullLog(), lines.append, failures)
    assert lines == ["one\n", "replay child 1: imported\n", "fusiondiff: shown\n", "last\n"]
    assert [f.errno for f in failures] == [errno.ENOSPC]  # one, however many writes failed


def test_a_log_on_a_full_disk_is_one_line_and_the_replay_still_reports(tmp_path, thread_tracebacks):
    code = tmp_path / "chatty.py"
    code.write_text(CHATTY_CHILD)
    log = tmp_path / "replay.log"
    log.symlink_to("/dev/full")
    messages: list[str] = []
    outcome = runner._run_child(
        {"scripts": []},
        60.0,
        messages.append,
        log,
        command=lambda params: [sys.executable, str(code), json.dumps(params)],
    )
    assert (outcome.status, outcome.fusions) == ("ok", 3)  # the child was read to its end
    assert messages == [
        f"fusiondiff: could not write the replay's log {log}: No space left on device; "
        "the replay's output from then on is not in it"
    ]
    assert thread_tracebacks == []


def test_a_cancelled_child_says_its_log_failure_once(tmp_path, thread_tracebacks):
    code = tmp_path / "chatty.py"
    code.write_text(CHATTY_CHILD.replace("open(params", "import time; time.sleep(60); open(params"))
    log = tmp_path / "replay.log"
    log.symlink_to("/dev/full")
    replay = child_process.ChildReplay({}, log, command=lambda params: [sys.executable, str(code), json.dumps(params)])
    messages: list[str] = []
    deadline = time.monotonic() + 30
    while not replay._log_failures and time.monotonic() < deadline:
        time.sleep(0.05)
    replay.cancel(messages.append)
    assert len(messages) == 1 and "could not write the replay's log" in messages[0]
    assert thread_tracebacks == []


def test_the_phases_file_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    path = tmp_path / "logs" / "0001_x.phases.json"
    path.parent.mkdir()
    real = Path.write_bytes

    def half_then_full(self: Path, data: str | bytes, *args: object, **kwargs: object) -> int:
        real(self, (data.encode() if isinstance(data, str) else data)[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    # whichever the writer uses, text or bytes
    monkeypatch.setattr(Path, "write_text", half_then_full)
    monkeypatch.setattr(Path, "write_bytes", half_then_full)
    with pytest.raises(OutputError, match=r"cannot write .*0001_x\.phases\.json: .*No space left on device"):
        PhaseLog().write(path)
    monkeypatch.undo()
    assert list(path.parent.iterdir()) == []  # neither a 0-byte or half file nor its temporary


def _child_main(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], **paths: str):
    monkeypatch.setattr(child, "run_replay", lambda *a, **k: child.ReplayOutcome(status="ok", message="m", fusions=2))
    params = {"scripts": [], "output": str(tmp_path / "r.json"), "options": {}, "status": str(tmp_path / "status.json")}
    code = child.main([json.dumps({**params, **paths})])
    return code, capsys.readouterr().out.splitlines()


def test_the_child_says_its_phases_were_not_kept_and_still_reports(tmp_path, monkeypatch, capsys):
    code, out = _child_main(tmp_path, monkeypatch, capsys, phases="/dev/full")
    assert code == 0
    assert [line for line in out if line.startswith("fusiondiff")] == [
        "fusiondiff: the replay's phases were not kept: cannot write /dev/full: No space left on device"
    ]
    assert json.loads((tmp_path / "status.json").read_text())["fusions"] == 2


def test_an_outcome_that_cannot_be_written_is_one_line_and_none_is_read(tmp_path, monkeypatch, capsys):
    code, out = _child_main(tmp_path, monkeypatch, capsys, status="/dev/full")
    assert code == 2
    assert out[-1] == (
        "fusiondiff: the replay's outcome (ok) could not be reported: cannot write /dev/full: No space left on device"
    )


@pytest.mark.parametrize("written", [b"", b'{"status": "ok", "mess', b"[1, 2]", b'{"colour": 1}'])
def test_a_damaged_outcome_file_is_an_error_outcome_not_a_traceback(tmp_path, written):
    code = tmp_path / "writes.py"
    code.write_text(f"import json, sys\nopen(json.loads(sys.argv[1])['status'], 'wb').write({written!r})\n")
    outcome = runner._run_child(
        {}, 60.0, print, tmp_path / "replay.log", command=lambda params: [sys.executable, str(code), json.dumps(params)]
    )
    assert outcome.status == "error"
    assert outcome.message.startswith("the replay process's outcome could not be read: ")
