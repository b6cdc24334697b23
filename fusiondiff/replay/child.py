"""The replay itself: run a repro script with the recorder installed, then time what it executed.

Runs in a fresh child process (``python -m fusiondiff.replay.child``) started by
:mod:`fusiondiff.replay.runner`, or in the caller's process with ``--in-process`` as a control.
Timing is deferred to after the script: a script that profiles its own ``fd.execute`` (as the seed
issue's script does) then never has a profiler overlapping ours.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from fusiondiff.errors import CaptureError, FusionDiffError, ReplayError
from fusiondiff.model import FusionRecord, TimingProtocol
from fusiondiff.recording.recorder import Progress, Recorder
from fusiondiff.store import save_capture


class ReplayTimeout(BaseException):
    """Raised inside the script when the parent asks the replay to stop (SIGTERM at the timeout).

    A BaseException, so the script's own ``except Exception`` does not swallow it.
    """


@dataclass(frozen=True)
class ReplayOutcome:
    """What the child tells the parent (as JSON in a status file)."""

    status: str
    """``ok``, ``script_error``, ``timeout`` or ``error``."""
    message: str = ""
    fusions: int = 0
    written: str | None = None


def read_script(script: str | Path) -> str:
    path = Path(script)
    if not path.is_file():
        raise ReplayError(f"{script}: no such file")
    try:
        return path.read_text()
    except UnicodeDecodeError:
        raise ReplayError(f"{script} is not a Python script (not text)") from None


class InputSubstitution:
    """Replaces a script's inputs by the live side's, matched on the definition hash."""

    def __init__(self, capture_path: str):
        from fusiondiff.store import load_capture, load_tensors, tensors_path_for

        capture = load_capture(capture_path)
        self.by_hash: dict[str, FusionRecord] = {}
        for fusion in capture.fusions:
            self.by_hash.setdefault(fusion.structure_hash, fusion)
        self.saved = load_tensors(capture_path) if tensors_path_for(capture_path).exists() else None
        self.used: set[str] = set()

    def __call__(self, structure: str, inputs: Sequence[Any]) -> list[Any] | None:
        from fusiondiff.recording.inputs import materialize

        fusion = self.by_hash.get(structure)
        if fusion is None or len(fusion.inputs) != len(inputs):
            return None
        self.used.add(fusion.key)
        return [materialize(meta, self.saved) for meta in fusion.inputs]


def run_replay(
    script: str,
    output: str,
    *,
    protocol: TimingProtocol | None = None,
    inputs_capture: str | None = None,
    save_inputs: bool = False,
    cuda_source: bool = False,
    progress: Progress | None = None,
    kind_note: str = "",
) -> ReplayOutcome:
    """Run ``script`` with the recorder installed, time its fusions, write ``output``."""
    from fusiondiff.replay.legacy import translate_legacy
    from fusiondiff.replay.repro import script_nvfuser_env

    source = read_script(script)
    translation = translate_legacy(source, filename=script)
    code = compile(translation.source, script, "exec")
    # the recorder imports nvFuser before the script runs: the script's NVFUSER_* settings must be
    # in the environment first, or nvFuser may never read them
    os.environ.update(script_nvfuser_env(translation.source, filename=script))
    override = InputSubstitution(inputs_capture) if inputs_capture else None
    recorder = Recorder(
        "replay", protocol, timing="deferred", save_inputs=save_inputs, cuda_source=cuda_source,
        progress=progress, input_override=override, source=script + kind_note,
    )
    recorder.warnings.extend(f"legacy script translated: {change}" for change in translation.changes)
    failure: tuple[str, str] | None = None
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [script]
    sys.path.insert(0, str(Path(script).resolve().parent))
    recorder.install()
    try:
        exec(code, {"__name__": "__main__", "__file__": str(Path(script).resolve()), "__builtins__": __builtins__})
    except ReplayTimeout:
        failure = ("timeout", "the script was stopped at the timeout")
    except SystemExit as exc:
        if exc.code not in (None, 0):
            failure = ("script_error", f"the script exited with {exc.code}")
    except Exception as exc:  # noqa: BLE001 - reported after what was recorded is saved
        failure = ("script_error", describe_script_failure(exc, script))
    finally:
        recorder.uninstall()
        sys.argv, sys.path = saved_argv, saved_path
    if override is not None:
        if override.used:
            recorder.warnings.append(f"inputs replaced by {inputs_capture}'s for {sorted(override.used)}")
        else:
            recorder.warnings.append(f"no fusion of the script matched a definition in {inputs_capture}")
    if failure is not None:
        recorder.warnings.append(failure[1])
    try:
        capture = recorder.finish()
    except CaptureError as exc:
        if failure is not None and recorder.fusion_count == 0:
            return ReplayOutcome(status=failure[0], message=f"{failure[1]}; no fusion was executed before it")
        if recorder.fusion_count == 0:
            return ReplayOutcome(status="error", message="the script executed no fusion (no FusionDefinition.execute ran)")
        return ReplayOutcome(status="error", message=str(exc))
    path = save_capture(capture, output, recorder.tensors or None)
    if failure is not None:
        return ReplayOutcome(
            status=failure[0],
            message=f"{failure[1]}; the {len(capture.fusions)} fusion(s) executed before it were written to {path}",
            fusions=len(capture.fusions),
            written=str(path),
        )
    if override is not None and not override.used:
        # the user asked for the live inputs: a replay on the script's own inputs is not that run
        return ReplayOutcome(
            status="error",
            message=(
                f"--inputs: no fusion of the script has the definition of a fusion in {inputs_capture}, so the "
                f"script's own inputs were used; that replay was written to {path}"
            ),
            fusions=len(capture.fusions),
            written=str(path),
        )
    return ReplayOutcome(status="ok", fusions=len(capture.fusions), written=str(path))


def describe_script_failure(exc: BaseException, script: str) -> str:
    """One line for an exception out of the script, at the script's own line.

    nvFuser rejecting a call's arguments (pybind's "incompatible function arguments") is told apart:
    that is an API form the legacy translation does not cover, not a fault of the script.
    """
    import traceback

    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == script]
    where = f" at line {lines[-1]}" if lines else ""
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    if isinstance(exc, TypeError) and "incompatible function arguments" in first:
        return f"nvFuser rejected a call{where} that fusiondiff did not translate: {first}"
    return f"the script's own code failed{where}: {type(exc).__name__}: {first}"


def _on_sigterm(signum: int, frame: Any) -> None:
    raise ReplayTimeout()


def main(argv: Sequence[str] | None = None) -> int:
    """Child entry point: one JSON argument with the replay's parameters and a status file path."""
    params = json.loads((argv or sys.argv[1:])[0])
    signal.signal(signal.SIGTERM, _on_sigterm)
    protocol = TimingProtocol(**params["protocol"])

    def progress(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    try:
        outcome = run_replay(
            params["script"], params["output"], protocol=protocol, inputs_capture=params.get("inputs"),
            save_inputs=params.get("save_inputs", False), cuda_source=params.get("cuda_source", False),
            progress=progress,
        )
    except ReplayTimeout:
        outcome = ReplayOutcome(status="timeout", message="stopped at the timeout while timing")
    except FusionDiffError as exc:
        outcome = ReplayOutcome(status="error", message=str(exc))
    except SyntaxError as exc:
        outcome = ReplayOutcome(status="error", message=f"{params['script']} is not valid Python: {exc.msg} (line {exc.lineno})")
    except Exception as exc:  # noqa: BLE001 - an internal failure still reaches the parent as one line
        if os.environ.get("FUSIONDIFF_DEBUG"):
            import traceback

            traceback.print_exc()
        outcome = ReplayOutcome(status="error", message=f"internal error in the replay: {type(exc).__name__}: {exc}")
    Path(params["status"]).write_text(json.dumps(asdict(outcome)))
    return 0 if outcome.status == "ok" else 2


if __name__ == "__main__":
    raise SystemExit(main())
