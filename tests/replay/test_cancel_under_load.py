"""Cancelling a replay forked a moment ago, a few hundred times under CPU load (issue #40): the
cancel once signalled the child's process group before the forked child had made it, ignored the
failure and waited for the child without a limit (1 run in 6 under load; the suite hung on it once
for 286 s). Each cancel here must end the child, and the whole loop runs under a deadline of its
own, so a regression fails the test instead of hanging the suite."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fusiondiff.replay import fork_server, runner

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork and /proc: Linux")

ROUNDS = 300
DEADLINE_S = 120.0
"""The whole loop's limit: about 15 s on two loaded cores; past this it is a hang, not a slow machine."""


@pytest.fixture
def load():
    """Two processes spinning on the CPU beside the test (the race showed under load)."""
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL) for _ in range(2)
    ]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait(timeout=10)


def test_cancel_right_after_a_fork_ends_the_child_every_time_under_load(tmp_path: Path, load: None) -> None:
    script = tmp_path / "s.py"
    script.write_text("x = 1\n")
    server = fork_server.ForkServer(log_file=tmp_path / "server.log")
    pids: list[int] = []
    failures: list[BaseException] = []
    done = threading.Event()

    def rounds() -> None:
        try:
            for k in range(ROUNDS):
                # gated: left alone it would wait at its gate forever, so only the cancel ends it
                pending = runner.start_replay(
                    [str(script)], output=str(tmp_path / f"r{k % 4}.json"), fork_server=server, gate="imports"
                )
                pids.append(pending._child._proc.pid)
                pending.cancel()  # at once: before the child may have left the server's group
                assert pending._child._proc.returncode is not None, f"round {k}: cancel returned before the child ended"
        except BaseException as exc:  # noqa: BLE001 - reported by the test's thread
            failures.append(exc)
        finally:
            done.set()

    try:
        assert server.wait_ready(60) is None
        started = time.monotonic()
        threading.Thread(target=rounds, daemon=True, name="cancel-stress").start()
        assert done.wait(DEADLINE_S), f"cancel hung: {len(pids)} of {ROUNDS} rounds in {DEADLINE_S:.0f} s"
        assert not failures, failures[0]
        assert len(pids) == ROUNDS
        assert not [pid for pid in pids if fork_server._alive(pid) and os.getsid(pid) == pid]
        print(f"{ROUNDS} forked replays cancelled in {time.monotonic() - started:.1f} s")
    finally:
        server.close()
