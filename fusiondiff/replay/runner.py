"""``fusiondiff replay``: run repro scripts in a fresh child process and collect one capture.

The child's whole output (the scripts' prints, nvFuser's C++ stacks) goes to a log beside the
capture (``replay.log`` for ``replay.json``); only fusiondiff's progress lines reach the terminal.
The child runs in its own process group, so at the timeout (or when it finishes) the whole group,
including anything the script started, is stopped. At the timeout the child first gets SIGTERM,
which stops the script and lets it time and save what it recorded; SIGKILL follows after a grace
period.
"""

from __future__ import annotations

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
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from fusiondiff import live_side
from fusiondiff.errors import ReplayError, not_a_file
from fusiondiff.options import RecordingOptions
from fusiondiff.progress import Progress, silent
from fusiondiff.replay.child import ReplayOutcome, read_script, run_replay
from fusiondiff.replay.phases import phases_path_for
from fusiondiff.replay.stages import (
    ENDED,
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


def _check_script(script: str) -> None:
    """Fail early, with one line, on a missing, non-text or non-Python file."""
    from fusiondiff.replay.legacy import translate_legacy

    source = read_script(script)
    translate_legacy(source, filename=script)


def expand_scripts(paths: Sequence[str]) -> list[str]:
    """Scripts named directly, and the ``*.py`` files of named directories (sorted)."""
    scripts: list[str] = []
    for path in paths:
        if Path(path).is_dir():
            found = sorted(str(p) for p in Path(path).glob("*.py"))
            if not found:
                raise ReplayError(f"{path} is a directory with no .py script in it")
            scripts += found
        else:
            scripts.append(path)
    return scripts


def log_path_for(output: str | os.PathLike[str]) -> Path:
    """Where the replay keeps the child's whole output: beside the capture, ``.log`` (``replay.log``
    for ``replay.json`` and ``replay.json.gz``)."""
    path = Path(output)
    return path.with_name(path.name.removesuffix(".gz")).with_suffix(".log")


def _kill_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _stderr_write(line: str) -> None:
    try:
        sys.stderr.write(line)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _forward(stream: IO[bytes], log: IO[bytes], seen: Callable[[str], None] | None = None) -> None:
    """Copy the child's output into the log; show fusiondiff's own progress lines on stderr.
    The script's output and nvFuser's C++ stacks stay in the log. ``seen`` gets every line (a
    gated child's stages are read from them)."""
    for raw in iter(stream.readline, b""):
        log.write(raw)
        log.flush()
        line = raw.decode(errors="replace")
        if seen is not None:
            seen(line)
        if line.startswith("fusiondiff"):
            _stderr_write(line)


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
      the profiler once, launching no kernel, then waits for :meth:`go` to run its scripts and take
      its warm-ups and samples;
    - ``"gpu"``: the same, but its scripts run (each fusion compiled at its first execute) in the
      preparation, before it waits for :meth:`go` to take its warm-ups and samples. Between the two
      it launches no kernel.

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
        self._reader = threading.Thread(target=_forward, args=(self._proc.stdout, self._log, self._seen), daemon=True)
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
        if "go" in self._sent:
            return TIMING
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
        self._send("go", close=True)

    def cancel(self) -> None:
        """Stop the child and everything in its group, unused."""
        _kill_group(self._proc.pid, signal.SIGKILL)
        self._proc.wait()
        self._reader.join(timeout=5)
        self._close()

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
                    proc.wait()
            except BaseException:
                _kill_group(proc.pid, signal.SIGKILL)
                proc.wait()
                raise
            finally:
                # whatever the script left behind in its group goes too
                _kill_group(proc.pid, signal.SIGKILL)
                self._reader.join(timeout=5)
            return self._outcome(timed_out, timeout_s)
        finally:
            self._close()  # after the reader thread is done with the log

    def _outcome(self, timed_out: bool, timeout_s: float) -> ReplayOutcome:
        if self._status.exists():
            outcome = ReplayOutcome(**json.loads(self._status.read_text()))
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

    def _close(self) -> None:
        for pipe in (self._proc.stdin, self._proc.stdout) if hasattr(self, "_proc") else ():
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass
        self._log.close()
        self._tmp.cleanup()


def _run_child(
    params: dict[str, Any],
    timeout_s: float,
    progress: Progress,
    log_file: Path,
    command: Callable[[dict[str, Any]], list[str]] = child_command,
    child_env: Mapping[str, str] | None = None,
    phases: bool = False,
) -> ReplayOutcome:
    """Run one replay child now and wait for its outcome."""
    child = ChildReplay(params, log_file, command=command, child_env=child_env, phases=phases)
    return child.wait(timeout_s, progress)


class PendingReplay:
    """A replay whose fresh process is started and prepared, waiting for its turn
    (:func:`start_replay`): :meth:`run` lets it run and returns the capture written, as
    :func:`replay_scripts` does; :meth:`cancel` stops it unused."""

    def __init__(self, child: ChildReplay, timeout_s: float, progress: Progress) -> None:
        self._child, self._timeout_s, self._progress = child, timeout_s, progress

    def run(self) -> Path:
        self._child.go()
        return _written(self._child.wait(self._timeout_s, self._progress))

    def cancel(self) -> None:
        self._child.cancel()

    def prepare(self) -> None:
        """Let it prepare on the GPU now (gated at ``"context"`` or ``"gpu"``; see :class:`ChildReplay`)."""
        self._child.prepare()

    def go(self) -> None:
        """Let it time now, without waiting for it (:meth:`run` waits)."""
        self._child.go()

    def stage(self) -> str:
        return self._child.stage()


def start_replay(
    scripts: Sequence[str],
    *,
    output: str,
    options: RecordingOptions | None = None,
    timeout_s: float = 900.0,
    progress: Progress | None = None,
    child_env: Mapping[str, str] | None = None,
    gate: str = "imports",
    phases: bool = False,
) -> PendingReplay:
    """Start the fresh process of a replay of ``scripts`` now; it prepares as far as ``gate`` says
    (``"imports"``: imports torch and nvFuser, then waits for :meth:`PendingReplay.run` before it
    touches the GPU; ``"context"``: also, once told :meth:`PendingReplay.prepare`, makes its CUDA
    context and opens the profiler once, then waits to run its scripts and time; ``"gpu"``: also runs
    and compiles its scripts in the preparation, then waits to time). The
    same checks as :func:`replay_scripts` run first and raise :class:`ReplayError`."""
    params = _child_params(scripts, output, options or RecordingOptions(), None, None)
    child = ChildReplay(params, log_path_for(output), child_env=child_env, gate=gate, phases=phases)
    return PendingReplay(child, timeout_s, progress or silent)


def _child_params(
    scripts: Sequence[str],
    output: str,
    options: RecordingOptions,
    inputs_capture: str | None,
    device: int | None,
) -> dict[str, Any]:
    """The child's parameters, after the checks that fail early with one line."""
    if device is not None and device < 0:
        raise ReplayError(f"--device {device}: a device index is 0 or more")
    scripts = expand_scripts(scripts)
    for script in scripts:
        _check_script(script)
    if inputs_capture is not None:
        from fusiondiff.store import load_capture

        load_capture(inputs_capture)  # a bad --inputs file fails before the script runs
    return {
        "scripts": scripts,
        "output": output,
        "options": options.to_jsonable(),
        "inputs": inputs_capture,
        "device": device,
    }


def _written(outcome: ReplayOutcome) -> Path:
    if outcome.status != "ok":
        raise ReplayError(outcome.message)
    assert outcome.written is not None
    return Path(outcome.written)


def replay_scripts(
    scripts: Sequence[str],
    *,
    output: str,
    options: RecordingOptions | None = None,
    inputs_capture: str | None = None,
    in_process: bool = False,
    timeout_s: float = 900.0,
    progress: Progress | None = None,
    child_env: Mapping[str, str] | None = None,
    device: int | None = None,
    phases: bool = False,
) -> Path:
    """Replay ``scripts`` (one after the other, in one fresh process) and write one capture to
    ``output``; the process's whole output goes to :func:`log_path_for` ``(output)``. Raises
    :class:`ReplayError` on failure, after keeping whatever was recorded (a fusion that failed is in
    the capture with its failure). ``child_env`` is added to the child's environment (the round
    trip gives each worker its GPU with ``CUDA_VISIBLE_DEVICES``); not with ``in_process``.
    ``device`` is the GPU (index among those visible) to replay on; a CUDA ordinal a script pins
    that the machine lacks is replayed on the current device either way
    (:mod:`fusiondiff.replay.devices`). Torch and nvFuser are looked for first
    (:func:`fusiondiff.live_side.require`), after the scripts themselves: without them nothing starts.
    With ``phases``, the child writes its phases' wall-clock times beside the log
    (:func:`fusiondiff.replay.phases.phases_path_for`)."""
    for script in expand_scripts(scripts):  # a path that is no script is the first thing to say
        problem = not_a_file(script, "repro script (.py)")
        if problem:
            raise ReplayError(problem)
    live_side.require("the replay")
    progress = progress or silent
    options = options or RecordingOptions()
    params = _child_params(scripts, output, options, inputs_capture, device)
    if in_process:
        outcome = run_replay(
            params["scripts"],
            output,
            options,
            inputs_capture=inputs_capture,
            progress=progress,
            kind_note=" (in-process)",
            device=device,
        )
    else:
        outcome = _run_child(params, timeout_s, progress, log_path_for(output), child_env=child_env, phases=phases)
    return _written(outcome)


def replay_script(script: str, **kwargs: Any) -> Path:
    """:func:`replay_scripts` of one script."""
    return replay_scripts([script], **kwargs)
