"""A stop request is seen at once, even while the main thread waits inside C++ (run in child
processes: the wakeup descriptor and the watcher are per process)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SEEN_AT_ONCE = textwrap.dedent(
    """
    import os, signal
    from fusiondiff.records import termination
    signal.signal(signal.SIGTERM, lambda *args: None)  # a Python handler, as the command line has
    assert termination.watch() and termination.watch()
    os.kill(os.getpid(), signal.SIGTERM)
    print("requested", termination.requested.wait(5))
    """
)

# The main thread waits in C++ (a torch future, as it waits in the autograd engine during a
# backward) while another thread sends SIGTERM: the Python handler cannot run until the wait ends,
# the watcher sees the request before that.
SEEN_WHILE_BLOCKED = textwrap.dedent(
    """
    import os, signal, threading, time
    import torch
    from fusiondiff.records import termination
    order = []
    signal.signal(signal.SIGTERM, lambda *args: order.append("handler"))
    termination.watch()
    future = torch.futures.Future()

    def stop_then_release():
        time.sleep(0.5)  # the main thread is in future.wait() by then
        os.kill(os.getpid(), signal.SIGTERM)
        order.append(f"requested {termination.requested.wait(5)}")
        future.set_result(None)

    threading.Thread(target=stop_then_release).start()
    future.wait()
    print(order)
    """
)


def _run(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_sigterm_sets_the_stop_request():
    assert _run(SEEN_AT_ONCE) == "requested True"


def test_stop_request_is_seen_before_the_main_thread_can_run_its_handler():
    pytest.importorskip("torch")
    assert _run(SEEN_WHILE_BLOCKED) == "['requested True', 'handler']"


def test_a_ctrl_c_while_fusiondiff_starts_never_shows_a_traceback_of_fusiondiff():
    """SIGINT at 0 to 230 ms after ``python -m fusiondiff show`` starts (issue #40: 7 of 40 early
    interrupts gave a traceback). ``-S`` leaves out the environment's ``.pth`` files (an editable
    install's import hook runs there, before any fusiondiff code); what Python's own start-up and
    ``runpy`` import before the package is theirs, so a traceback counts only where a frame is
    fusiondiff's. Every outcome is one of: exit 130 with one line, killed by the signal before
    Python installed its handler, Python's own "Could not import runpy module", or done before the
    signal came. Python's start-up failing while it makes ``sys.stdout`` ("Fatal Python error:
    init_sys_streams", once in 80 runs with the CPU busy) exits 1 too, as the runpy case does."""
    import signal as signals
    import subprocess
    import time

    root = Path(__file__).resolve().parent.parent.parent
    site = [p for p in sys.path if p.endswith("site-packages")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), *site])}
    capture = root / "tests" / "data" / "offset" / "live.json"
    outcomes = []
    for i in range(24):
        p = subprocess.Popen(
            [sys.executable, "-S", "-m", "fusiondiff", "show", str(capture)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(i * 0.01)
        p.send_signal(signals.SIGINT)
        _, err = p.communicate(timeout=60)
        ours = [line for line in err.splitlines() if line.strip().startswith("File") and "fusiondiff" in line]
        assert not ours, err
        if p.returncode == 1:  # Python's own, before fusiondiff: the signal landed while it imported
            # runpy, or while it made sys.stdout (its frozen io and abc modules the only frames)
            frames = [line.strip() for line in err.splitlines() if line.strip().startswith("File")]
            in_init = err.startswith("Fatal Python error: init_sys_streams") and err.rstrip().endswith(
                "KeyboardInterrupt"
            )
            assert err.startswith("Could not import runpy module") or (
                in_init and all(f.startswith('File "<frozen ') for f in frames)
            ), err
        if p.returncode == -signals.SIGSEGV:  # the interpreter's own crash in its start-up, no output:
            assert err == "", err  # seen on the checkout before this change too; not investigated
            continue
        assert p.returncode in (130, -signals.SIGINT, 0, 1), (p.returncode, err)
        if p.returncode == 130:  # one line, by the early handler or by the command's own
            assert err.strip() in ("fusiondiff: interrupted", "fusiondiff show: interrupted"), err
        outcomes.append(p.returncode)
    assert 130 in outcomes  # the handler's window was reached


class _StopsWhileMade:
    """A descriptor whose ``__set_name__`` raises ``stop``: a Ctrl-C or SIGTERM landing while a
    module imported under the command line makes its classes (``platform``'s ``uname_result``)."""

    def __init__(self, stop: BaseException) -> None:
        self.stop = stop

    def __set_name__(self, owner: type, name: str) -> None:
        raise self.stop


def _stopping_parser(stop: BaseException):
    def build_parser():
        class Made:  # Python 3.11 wraps what __set_name__ raises in a RuntimeError raised from it
            attribute = _StopsWhileMade(stop)

    return build_parser


@pytest.mark.parametrize(
    "stop, code, said",
    [(KeyboardInterrupt(), 130, "interrupted"), ("terminated", 143, "terminated")],
)
def test_a_stop_landing_while_a_class_is_made_is_a_stop_not_a_traceback(monkeypatch, capsys, stop, code, said):
    """The CI run of issue #53's stop: a Ctrl-C inside ``build_parser``'s imports reached the user
    as ``RuntimeError: Error calling __set_name__`` with fusiondiff's traceback."""
    from fusiondiff.front import cli
    from fusiondiff.front.stops import Terminated

    stop = Terminated() if stop == "terminated" else stop
    monkeypatch.setattr(cli, "build_parser", _stopping_parser(stop))
    assert cli.main(["show", "x"]) == code
    assert capsys.readouterr().err == f"fusiondiff: {said}\n"


def test_a_fault_raised_while_a_stop_was_handled_keeps_its_traceback(monkeypatch):
    """Only an error raised *from* a stop is the stop: one raised while a Ctrl-C was handled (its
    ``__context__``) is a fault of its own, and the command line does not hide it."""
    from fusiondiff.front import cli

    def build_parser():
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise RuntimeError("a cleanup that failed")  # noqa: B904 (the context is the point)

    monkeypatch.setattr(cli, "build_parser", build_parser)
    with pytest.raises(RuntimeError, match="a cleanup that failed"):
        cli.main(["show", "x"])
