"""``fusiondiff replay``: run repro scripts in a fresh child process and collect one capture.

The child's whole output (the scripts' prints, nvFuser's C++ stacks) goes to a log beside the
capture (``replay.log`` for ``replay.json``); only fusiondiff's progress lines reach the terminal.
The child runs in its own process group, so at the timeout (or when it finishes) the whole group,
including anything the script started, is stopped. At the timeout the child first gets SIGTERM,
which stops the script and lets it time and save what it recorded; SIGKILL follows after a grace
period.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fusiondiff.recording import live_side
from fusiondiff.records.codec import to_jsonable
from fusiondiff.records.errors import ReplayError, not_a_file
from fusiondiff.records.options import RecordingOptions
from fusiondiff.records.progress import Progress, silent
from fusiondiff.records.thunder import ThunderFigure, merged_figures
from fusiondiff.replay.child import ReplayOutcome, read_script, run_replay
from fusiondiff.replay.child_process import ChildReplay, child_command
from fusiondiff.replay.fork_server import ForkServer
from fusiondiff.replay.thunder_folder import check_output_outside, expand_thunder_folders, runnable_source


def _checked_source(script: str) -> str:
    """The script as the child will run it (a Thunder benchmark's timing cut, a legacy script
    translated); fails early, with one line, on a missing, non-text or non-Python file."""
    from fusiondiff.replay.legacy import translate_legacy

    return translate_legacy(runnable_source(read_script(script), script), filename=script).source


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


def _run_child(
    params: dict[str, Any],
    timeout_s: float,
    progress: Progress,
    log_file: Path,
    command: Callable[[dict[str, Any]], list[str]] = child_command,
    child_env: Mapping[str, str] | None = None,
    phases: bool = False,
    relay: Progress | None = None,
) -> ReplayOutcome:
    """Run one replay child now and wait for its outcome (its own progress lines to ``relay``)."""
    child = ChildReplay(params, log_file, command=command, child_env=child_env, phases=phases, relay=relay)
    return child.wait(timeout_s, progress)


class PendingReplay:
    """A replay whose fresh process is started and prepared, waiting for its turn
    (:func:`start_replay`): :meth:`run` lets it run and returns the capture written, as
    :func:`replay_scripts` does; :meth:`cancel` stops it unused."""

    def __init__(self, child: ChildReplay, timeout_s: float, progress: Progress) -> None:
        self._child, self._timeout_s, self._progress = child, timeout_s, progress

    def run(self, timeout_s: float | None = None) -> Path:
        """Let it run, for its timeout or ``timeout_s`` (the rest of a turn begun before)."""
        self._child.go()
        return _written(self._child.wait(self._timeout_s if timeout_s is None else timeout_s, self._progress))

    def cancel(self) -> None:
        self._child.cancel(self._progress)

    def prepare(self) -> None:
        """Let it prepare on the GPU now (gated at ``"context"`` or ``"gpu"``; see :class:`ChildReplay`)."""
        self._child.prepare()

    def go(self) -> None:
        """Let it time now, without waiting for it (:meth:`run` waits)."""
        self._child.go()

    def start_turn(self) -> None:
        """Let it run its scripts now, its samples held (gated at ``"context"``; see :class:`ChildReplay`)."""
        self._child.start_turn()

    def sample(self) -> None:
        """Let it take its samples now, without waiting for it (:meth:`run` waits)."""
        self._child.sample()

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
    fork_server: ForkServer | None = None,
    relay: Progress | None = None,
) -> PendingReplay:
    """Start the fresh process of a replay of ``scripts`` now; it prepares as far as ``gate`` says
    (``"imports"``: imports torch and nvFuser, then waits for :meth:`PendingReplay.run` before it
    touches the GPU; ``"context"``: also, once told :meth:`PendingReplay.prepare`, makes its CUDA
    context and opens the profiler once, then waits to run its scripts and time; ``"gpu"``: also runs
    and compiles its scripts in the preparation, then waits to time). The
    same checks as :func:`replay_scripts` run first and raise :class:`ReplayError`. With
    ``fork_server``, the process is forked from it where the scripts' ``NVFUSER_*`` settings allow
    (:meth:`ForkServer.can_serve`), else started fresh. The child's own progress lines go to
    ``relay``, else to ``progress`` where one is given, else to stderr as they come."""
    params, sources = _child_params(scripts, output, options or RecordingOptions(), None, None)
    if fork_server is not None and not _forkable(sources, fork_server):
        fork_server = None
    child = ChildReplay(
        params,
        log_path_for(output),
        child_env=child_env,
        gate=gate,
        phases=phases,
        fork_server=fork_server,
        relay=relay or progress,
    )
    return PendingReplay(child, timeout_s, progress or silent)


def _forkable(sources: Sequence[tuple[str, str]], fork_server: ForkServer) -> bool:
    """Whether the scripts' ``NVFUSER_*`` settings (``sources``: each script and its source as the
    child runs it) are the server's; scripts that disagree among themselves are not (a fresh child
    then says so, as without one)."""
    from fusiondiff.replay.script_env import scripts_nvfuser_env

    try:
        return fork_server.can_serve(scripts_nvfuser_env(sources))
    except ReplayError:
        return False


def _child_params(
    scripts: Sequence[str],
    output: str,
    options: RecordingOptions,
    inputs_capture: str | None,
    device: int | None,
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The child's parameters, after the checks that fail early with one line, and each script with
    its source as the child will run it (read and translated by those checks)."""
    if device is not None and device < 0:
        raise ReplayError(f"--device {device}: a device index is 0 or more")
    scripts = expand_scripts(scripts)
    sources = [(script, _checked_source(script)) for script in scripts]
    if inputs_capture is not None:
        from fusiondiff.io.store import load_capture

        load_capture(inputs_capture)  # a bad --inputs file fails before the script runs
    params = {
        "scripts": scripts,
        "output": output,
        "options": options.to_jsonable(),
        "inputs": inputs_capture,
        "device": device,
    }
    return params, sources


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
    thunder_stream: str | None = None,
    relay: Progress | None = None,
) -> Path:
    """Replay ``scripts`` (one after the other, in one fresh process) and write one capture to
    ``output``; the process's whole output goes to :func:`log_path_for` ``(output)``. Raises
    :class:`ReplayError` on failure, after keeping whatever was recorded (a fusion that failed is in
    the capture with its failure). ``child_env`` is added to the child's environment (the round
    trip gives each worker its GPU with ``CUDA_VISIBLE_DEVICES``); not with ``in_process``.
    ``device`` is the GPU (index among those visible) to replay on; a CUDA ordinal a script pins
    that the machine lacks is replayed on the current device either way
    (:mod:`fusiondiff.replay.devices`). Torch and nvFuser are looked for first
    (:func:`fusiondiff.recording.live_side.require`), after the scripts themselves: without them nothing starts.
    With ``phases``, the child writes its phases' wall-clock times beside the log
    (:func:`fusiondiff.replay.phases.phases_path_for`). A folder Thunder's report functions wrote
    stands for one nvFuser script per nvFusion region (:mod:`fusiondiff.replay.thunder_folder`),
    each replay named after its region, every other script said skipped in one progress line, and
    the medians Thunder printed (in its benchmark scripts, and in ``thunder_stream``) kept in the
    capture (``Capture.thunder_figures``). The child's own progress lines go to ``relay``, else to
    ``progress`` where one is given, else to stderr as they come."""
    relay = relay or progress
    progress = progress or silent
    check_output_outside(output, scripts)
    scripts, figures = _thunder_scripts(scripts, thunder_stream, progress)
    for script in expand_scripts(scripts):  # a path that is no script is the first thing to say
        problem = not_a_file(script, "repro script (.py)")
        if problem:
            raise ReplayError(problem)
    live_side.require("the replay")
    options = options or RecordingOptions()
    params, _ = _child_params(scripts, output, options, inputs_capture, device)
    params["thunder_figures"] = [to_jsonable(figure) for figure in figures]
    if in_process:
        outcome = run_replay(
            params["scripts"],
            output,
            options,
            inputs_capture=inputs_capture,
            progress=progress,
            kind_note=" (in-process)",
            device=device,
            thunder_figures=figures,
        )
    else:
        outcome = _run_child(
            params, timeout_s, progress, log_path_for(output), child_env=child_env, phases=phases, relay=relay
        )
    return _written(outcome)


def _thunder_scripts(
    paths: Sequence[str], stream: str | None, progress: Progress
) -> tuple[list[str], tuple[ThunderFigure, ...]]:
    """``paths`` with each Thunder folder replaced by its regions' scripts (each skipped script said
    in one progress line), and the figures Thunder printed for them."""
    scripts, folders = expand_thunder_folders(paths, stream)
    if stream is not None and not folders:
        raise ReplayError("--thunder-stream: give the Thunder report folder it was printed for")
    for folder in folders:
        progress(f"fusiondiff: {folder.root}: Thunder's folder, {len(folder.regions)} nvFusion region(s) to replay")
        for skipped in folder.skipped:
            progress(f"fusiondiff: skipped {skipped.path}: {skipped.reason}")
    return scripts, merged_figures(*(folder.figures for folder in folders))


def replay_script(script: str, **kwargs: Any) -> Path:
    """:func:`replay_scripts` of one script."""
    return replay_scripts([script], **kwargs)


def replay_in_processes(scripts: Sequence[str], *, output: str, processes: int, **kwargs: Any) -> Path:
    """:func:`replay_scripts` ``processes`` times, each run a fresh process with its inputs placed
    afresh, pooled into one capture at ``output``: the first process's records, each fusion with the
    others' timings of it (:mod:`fusiondiff.records.processes`), so that ``fusiondiff diff`` judges
    it against the spread measured between them. The other processes write into a temporary folder
    beside ``output`` (their logs are appended to the first's log, each under a heading). Should a
    later process fail, the processes that ran are pooled and written before its error is raised."""
    import tempfile

    from fusiondiff.io.store import load_capture, save_capture
    from fusiondiff.records.processes import pool

    if processes < 1:
        raise ReplayError(f"--processes takes a count of 1 or more, not {processes}")
    progress = kwargs.get("progress") or silent
    first = replay_scripts(scripts, output=output, **kwargs)
    if processes == 1:
        return first
    others: list[str] = []
    failure: ReplayError | None = None
    with tempfile.TemporaryDirectory(prefix=".processes-", dir=Path(output).parent) as folder:
        for k in range(2, processes + 1):
            progress(f"fusiondiff: process {k} of {processes}")
            path = str(Path(folder) / f"process{k}.json")
            try:
                others.append(str(replay_scripts(scripts, output=path, **kwargs)))
            except ReplayError as exc:
                failure = exc
                break
            finally:
                _append_log(log_path_for(first), log_path_for(path), k)
        pooled = pool(load_capture(first), [load_capture(path) for path in others])
        save_capture(pooled.capture, first)
    progress(f"fusiondiff: {pooled.processes} processes pooled into {first}")
    if failure is not None:
        raise ReplayError(
            f"process {len(others) + 2} of {processes} failed ({failure}); the {pooled.processes} before it are pooled in {first}"
        )
    return first


def _append_log(log: Path, other: Path, k: int) -> None:
    """The log of process ``k`` appended to the first process's log, under a heading."""
    if other.exists():
        with log.open("a", encoding="utf-8", errors="replace") as out:
            out.write(f"\n===== process {k} =====\n")
            out.write(other.read_text(encoding="utf-8", errors="replace"))
