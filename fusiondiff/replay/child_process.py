"""One replay child process: started with its parameters, its output copied to its log, its stages
read from the lines it prints with its own nonce, its gates opened by words on its stdin, waited
for under a timeout (SIGTERM, then SIGKILL after a grace period), stopped with its whole process
group. :mod:`fusiondiff.replay.runner` runs replays through it; the child's side is
:mod:`fusiondiff.replay.child`."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

from fusiondiff.records.progress import Progress
from fusiondiff.replay.child import ReplayOutcome
from fusiondiff.replay.fork_server import ForkedProcess, ForkServer
from fusiondiff.replay.phases import phases_path_for
from fusiondiff.replay.stages import (
    COMPILED,
    COMPILING,
    ENDED,
    GATE_CONTEXT,
    GATE_IMPORTS,
    GATES,
    IMPORTED,
    PREPARED,
    PREPARING,
    STAGED_GATES,
    STARTING,
    TIMED,
    TIMING,
)

GRACE_S = 120.0
"""Time the child gets after SIGTERM to time and save what it recorded."""


KILL_WAIT_S = 30.0
"""How long the child is waited for once SIGKILL was sent; past it, it is left and the fact said."""


def _kill_group(pid: int, sig: int) -> None:
    """Signal the child's process group and the child itself: a child not yet leading its own group
    (a forked one between its fork and its ``setsid``) is still reached."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _reaped(proc: Any, timeout_s: float = KILL_WAIT_S) -> str | None:
    """Wait for a child sent SIGKILL, at most ``timeout_s``: None once it ended, else what to say."""
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return f"fusiondiff: replay process {proc.pid} did not end {timeout_s:.0f} s after SIGKILL; left behind"
    return None


def stderr_line(line: str) -> None:
    """Write one of the child's progress lines to stderr as it came: where no ``relay`` was given."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _forward(
    stream: IO[bytes],
    log: IO[bytes],
    seen: Callable[[str], None] | None = None,
    failures: list[OSError] | None = None,
    relay: Progress = stderr_line,
) -> None:
    """Copy the child's output into the log; hand fusiondiff's own progress lines to ``relay``
    (the child writes them whole, one a line, and the parent fits them to its terminal).
    The script's output and nvFuser's C++ stacks stay in the log. ``seen`` gets every line (a
    gated child's stages are read from them). A ``relay`` that cannot write (stderr gone) is
    passed over: the child's output is still read.

    A log that cannot be written (a full disk) is written no more, its error kept in ``failures``
    for the waiting thread to say, and the child's output is still read to its end: its stages
    are still seen, and a child whose pipe is no longer read would block in its next print."""
    writing = True
    try:
        for raw in iter(stream.readline, b""):
            if writing:
                try:
                    log.write(raw)
                    log.flush()
                except (OSError, ValueError) as exc:
                    writing = False
                    if failures is not None and isinstance(exc, OSError):
                        failures.append(exc)
            line = raw.decode(errors="replace")
            if seen is not None:
                seen(line)
            if line.startswith("fusiondiff"):
                with contextlib.suppress(OSError, ValueError):
                    relay(line.rstrip("\r\n"))
    except (OSError, ValueError):  # the pipe closed under the reader (the child given up on)
        return


def child_command(params: dict[str, Any]) -> list[str]:
    """The replay child's command line: this Python running :mod:`fusiondiff.replay.child`, its
    parameters (with ``status``, the file it reports its :class:`ReplayOutcome` in) as one JSON argument."""
    return [sys.executable, "-m", "fusiondiff.replay.child", json.dumps(params)]


class ChildReplay:
    """One replay child process, started at construction.

    ``gate`` says how far a child started ahead of its turn goes before it waits (the round trip
    starts the next replays this way while the current one runs; a GPU still times one replay at a
    time and each replay is still a fresh process):

    - ``None``: no gate, it runs at once;
    - ``"imports"``: it reads its scripts, sets their ``NVFUSER_*`` environment and imports torch
      and nvFuser, then waits for :meth:`go` before it touches the GPU;
    - ``"context"``: the same, then it waits for :meth:`prepare` to make its CUDA context and open
      the profiler once (in a thread), launching no kernel, then waits for :meth:`go` to run its
      scripts and take its warm-ups and samples (or for :meth:`start_turn` to run its scripts, then
      for :meth:`sample` to take its samples); its scripts may start before its profiler has, and
      its samples wait for it;
    - ``"gpu"``: the same, but its scripts run (each fusion compiled at its first execute) in the
      preparation, before it waits for :meth:`go` to take its warm-ups and samples. Between the two
      it launches no kernel.

    With ``fork_server``, the process is forked from that server (torch and nvFuser already
    imported, no CUDA touched) instead of started as a fresh interpreter.

    The child's own progress lines (those that begin ``fusiondiff``) go to ``relay``, to stderr
    as they come where none is given; the rest of its output only to its log.

    :meth:`stage` says where it is, from the lines it prints and from what it was told.
    :meth:`wait` (after :meth:`go` when gated) gives its :class:`ReplayOutcome`; :meth:`cancel`
    stops a child that will not be used. With ``phases``, the child writes its phases' wall-clock
    times (:mod:`fusiondiff.replay.phases`) beside its log."""

    def __init__(
        self,
        params: dict[str, Any],
        log_file: Path,
        *,
        command: Callable[[dict[str, Any]], list[str]] = child_command,
        child_env: Mapping[str, str] | None = None,
        gated: bool = False,
        gate: str | None = None,
        phases: bool = False,
        fork_server: ForkServer | None = None,
        relay: Progress | None = None,
    ) -> None:
        gate = gate or (GATE_IMPORTS if gated else None)
        if gate is not None and gate not in GATES:
            raise ValueError(f"gate must be one of {GATES} or None, not {gate!r}")
        log_file.parent.mkdir(parents=True, exist_ok=True)
        self.log_file = log_file
        self.gate = gate
        self._nonce = secrets.token_hex(8)
        self._marks: set[str] = set()
        self._sent: set[str] = set()
        self._tmp = tempfile.TemporaryDirectory(prefix="fusiondiff-replay-")
        self._status = Path(self._tmp.name) / "status.json"
        self._log = open(log_file, "wb")  # noqa: SIM115 - closed by wait() or cancel()
        self._log_failures: list[OSError] = []
        """What writing the log met (kept by the reader thread, said once by :meth:`wait` or :meth:`cancel`)."""
        params = {
            **params,
            "status": str(self._status),
            "log": log_file.name,
            "gate": gate,
            "nonce": self._nonce,
            "spawned_at": time.time(),
            "phases": str(phases_path_for(log_file)) if phases else None,
        }
        try:
            if fork_server is not None:
                self._proc: subprocess.Popen[bytes] | ForkedProcess = fork_server.spawn(
                    json.dumps(params), dict(child_env or {})
                )
                if not gate:  # as a fresh child's stdin, it has nothing to read
                    self._proc.stdin.close()
                    self._proc.stdin = None  # type: ignore[assignment]
            else:
                self._proc = subprocess.Popen(
                    command(params),
                    start_new_session=True,
                    env={**os.environ, **child_env} if child_env else None,
                    stdin=subprocess.PIPE if gate else subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                )
        except BaseException:
            self._close()
            raise
        assert self._proc.stdout is not None
        self._reader = threading.Thread(
            target=_forward,
            args=(self._proc.stdout, self._log, self._seen, self._log_failures, relay or stderr_line),
            daemon=True,
        )
        self._reader.start()

    def _seen(self, line: str) -> None:
        prefix = f"replay child {self._nonce}: "
        if line.startswith(prefix):
            self._marks.add(line[len(prefix) :].split(";", 1)[0].strip())

    def stage(self) -> str:
        """Where the child is: one of :data:`fusiondiff.replay.stages.STAGES`."""
        if self._proc.poll() is not None:
            return ENDED
        if TIMED in self._marks:
            return TIMED
        if "go" in self._sent and (self.gate != GATE_CONTEXT or "sample" in self._sent):
            return TIMING
        if COMPILED in self._marks:
            return COMPILED
        if "go" in self._sent:
            return COMPILING
        if PREPARED in self._marks:
            return PREPARED
        if "prepare" in self._sent:
            return PREPARING
        if IMPORTED in self._marks:
            return IMPORTED
        return STARTING

    def _send(self, word: str, close: bool = False) -> None:
        stdin = self._proc.stdin
        if stdin is None or word in self._sent:
            return
        self._sent.add(word)
        try:
            stdin.write(f"{word}\n".encode())
            stdin.flush()
            if close:
                stdin.close()
        except (OSError, ValueError):
            pass

    def prepare(self) -> None:
        """Let a child gated at ``"context"`` or ``"gpu"`` prepare on the GPU now (returns at once;
        :meth:`stage` says ``prepared`` when it is done). A child gated at ``"imports"`` has nothing
        to prepare."""
        if self.gate in STAGED_GATES:
            self._send("prepare")

    def go(self) -> None:
        """Let a gated child run the rest of its replay (a child that already died is reported by
        :meth:`wait`)."""
        if self.gate == GATE_CONTEXT:
            self._send("go")
            self._send("sample", close=True)
        else:
            self._send("go", close=True)

    def start_turn(self) -> None:
        """Let a child gated at ``"context"`` run its scripts now and hold its samples until
        :meth:`sample` (:meth:`stage` says ``compiled`` when it waits); any other child waits for
        :meth:`sample`, since its samples follow its ``go`` at once."""
        if self.gate == GATE_CONTEXT:
            self._send("go")

    def sample(self) -> None:
        """Let it take its warm-ups and samples now (after :meth:`start_turn`): :meth:`go`."""
        self.go()

    def cancel(self, progress: Progress | None = None) -> None:
        """Stop the child and everything in its group, unused; waited for at most
        :data:`KILL_WAIT_S` (a child that outlives SIGKILL is said to ``progress``, not waited on)."""
        _kill_group(self._proc.pid, signal.SIGKILL)
        stuck = _reaped(self._proc)
        if stuck is not None and progress is not None:
            progress(stuck)
        self._reader.join(timeout=5)
        self._close()
        self._say_log_failure(progress)

    def wait(self, timeout_s: float, progress: Progress) -> ReplayOutcome:
        """Wait for the child (at most ``timeout_s``, then SIGTERM, then SIGKILL after
        :data:`GRACE_S`) and read what it reported."""
        proc = self._proc
        timed_out = False
        try:
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
                progress(f"fusiondiff: the script ran past {timeout_s:.0f} s; stopping it")
                _kill_group(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=GRACE_S)
                except subprocess.TimeoutExpired:
                    _kill_group(proc.pid, signal.SIGKILL)
                    stuck = _reaped(proc)
                    if stuck is not None:
                        progress(stuck)
            except BaseException:
                _kill_group(proc.pid, signal.SIGKILL)
                stuck = _reaped(proc)
                if stuck is not None:
                    progress(stuck)
                raise
            finally:
                # whatever the script left behind in its group goes too
                _kill_group(proc.pid, signal.SIGKILL)
                self._reader.join(timeout=5)
            return self._outcome(timed_out, timeout_s)
        finally:
            self._close()  # after the reader thread is done with the log
            self._say_log_failure(progress)

    def _say_log_failure(self, progress: Progress | None) -> None:
        """One line for a log that could not be written, however many writes failed."""
        if not self._log_failures or progress is None:
            return
        exc = self._log_failures[0]
        del self._log_failures[:]
        progress(
            f"fusiondiff: could not write the replay's log {self.log_file}: {exc.strerror or exc}; "
            "the replay's output from then on is not in it"
        )

    def _outcome(self, timed_out: bool, timeout_s: float) -> ReplayOutcome:
        outcome = self._reported()
        if outcome is not None:
            if timed_out and outcome.status != "timeout":
                outcome = dataclasses.replace(
                    outcome, status="timeout", message=f"timed out after {timeout_s:.0f} s; " + outcome.message
                )
            return outcome
        if timed_out:
            return ReplayOutcome(
                status="timeout", message=f"the script ran past {timeout_s:.0f} s and was killed; nothing was recorded"
            )
        code = self._proc.returncode
        died = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        return ReplayOutcome(
            status="error",
            message=f"the replay process died ({died}) before reporting; its output is in {self.log_file}",
        )

    def _reported(self) -> ReplayOutcome | None:
        """The outcome the child wrote (atomically), or None where there is none to read."""
        try:
            return ReplayOutcome(**json.loads(self._status.read_bytes()))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError) as exc:
            return ReplayOutcome(status="error", message=f"the replay process's outcome could not be read: {exc}")

    def _close(self) -> None:
        for pipe in (self._proc.stdin, self._proc.stdout) if hasattr(self, "_proc") else ():
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass
        try:
            self._log.close()  # its last buffered bytes: a full disk is said as the writes' failure is
        except OSError as exc:
            if not self._log_failures:
                self._log_failures.append(exc)
        self._tmp.cleanup()
