"""``fusiondiff replay``: run a repro script in a fresh child process and collect its capture.

The child runs in its own process group, so at the timeout (or when it finishes) the whole group,
including anything the script started, is stopped. At the timeout the child first gets SIGTERM,
which stops the script and lets it time and save what it recorded; SIGKILL follows after a grace
period.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from fusiondiff.errors import ReplayError
from fusiondiff.model import TimingProtocol
from fusiondiff.recording.recorder import Progress
from fusiondiff.replay.child import ReplayOutcome, read_script, run_replay

GRACE_S = 120.0
"""Time the child gets after SIGTERM to time and save what it recorded."""


def _check_script(script: str) -> None:
    """Fail early, with one line, on a missing, non-text or non-Python file."""
    from fusiondiff.replay.legacy import translate_legacy

    source = read_script(script)
    translate_legacy(source, filename=script)


def _kill_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _stderr_fd() -> int | None:
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # a replaced stderr (notebooks, test capture)
        return None


def _run_child(params: dict, timeout_s: float, progress: Progress) -> ReplayOutcome:
    with tempfile.TemporaryDirectory(prefix="fusiondiff-replay-") as tmp:
        status = Path(tmp) / "status.json"
        params = {**params, "status": str(status)}
        # the child's stdout (the script's prints) goes to our stderr: stdout is for reports
        proc = subprocess.Popen(
            [sys.executable, "-m", "fusiondiff.replay.child", json.dumps(params)],
            start_new_session=True,
            stdout=_stderr_fd(),
        )
        timed_out = False
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
        if status.exists():
            outcome = ReplayOutcome(**json.loads(status.read_text()))
            if timed_out and outcome.status != "timeout":
                outcome = dataclasses.replace(outcome, status="timeout", message=f"timed out after {timeout_s:.0f} s; " + outcome.message)
            return outcome
        if timed_out:
            return ReplayOutcome(status="timeout", message=f"the script ran past {timeout_s:.0f} s and was killed; nothing was recorded")
        return ReplayOutcome(status="error", message=f"the replay process died (exit code {proc.returncode}) before reporting")


def replay_script(
    script: str,
    *,
    output: str,
    protocol: TimingProtocol | None = None,
    inputs_capture: str | None = None,
    in_process: bool = False,
    timeout_s: float = 900.0,
    save_inputs: bool = False,
    cuda_source: bool = False,
    progress: Progress | None = None,
) -> Path:
    """Replay ``script`` and write its capture to ``output``; raises :class:`ReplayError` on failure
    (after keeping whatever was recorded before it)."""
    progress = progress or (lambda message: None)
    _check_script(script)
    if inputs_capture is not None:
        from fusiondiff.store import load_capture

        load_capture(inputs_capture)  # a bad --inputs file fails before the script runs
    protocol = protocol or TimingProtocol()
    if in_process:
        outcome = run_replay(
            script, output, protocol=protocol, inputs_capture=inputs_capture, save_inputs=save_inputs,
            cuda_source=cuda_source, progress=progress, kind_note=" (in-process)",
        )
    else:
        params = {
            "script": script,
            "output": output,
            "protocol": dataclasses.asdict(protocol),
            "inputs": inputs_capture,
            "save_inputs": save_inputs,
            "cuda_source": cuda_source,
        }
        outcome = _run_child(params, timeout_s, progress)
    if outcome.status != "ok":
        raise ReplayError(outcome.message)
    assert outcome.written is not None
    return Path(outcome.written)
