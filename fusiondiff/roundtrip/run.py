"""The run: scripts written, replays fed from a queue to one worker per GPU, each replay kept as it
ends (a rerun resumes), a stop leaving no process behind."""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from fusiondiff.records.errors import FusionDiffError
from fusiondiff.records.options import RecordingOptions
from fusiondiff.records.progress import Progress, silent
from fusiondiff.replay.stages import (
    DEFAULT_AHEAD,
    DEFAULT_FORKED,
    DEFAULT_PREPARE,
    PREPARE_CHOICES,
    PREPARE_HANDOVER,
    STAGED_GATES,
    child_gate,
)
from fusiondiff.roundtrip.folder import (
    check_folder,
    plan_scripts,
    tensors_files,
    trusted_replay,
    write_scripts,
)
from fusiondiff.roundtrip.plan import (
    combine_ranks,
    device_words,
    distinct_fusions,
    isolation_words,
    source_of,
    visible_devices,
)
from fusiondiff.roundtrip.records import ReplayPlan, RoundTripResult
from fusiondiff.roundtrip.replays import (
    TOKEN_ENV,
    ReplayFunction,
    StartAhead,
    forked_ahead,
    nothing_to_replay,
    replay_in_child,
    replays_open,
)
from fusiondiff.roundtrip.results import finish
from fusiondiff.roundtrip.sources import load_live_sources
from fusiondiff.roundtrip.workers import TurnTaking, Workers

if TYPE_CHECKING:
    from fusiondiff.roundtrip.slurm import SlurmExecutor, SlurmWork


def roundtrip(
    live: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    directory: str | os.PathLike[str],
    *,
    batch: int = 1,
    devices: Sequence[str | None] | None = None,
    replay: ReplayFunction | None = None,
    options: RecordingOptions | None = None,
    timeout_s: float = 900.0,
    progress: Progress | None = None,
    clock: Callable[[], float] = time.monotonic,
    prestart: bool = True,
    ahead: int = DEFAULT_AHEAD,
    prepare: str = DEFAULT_PREPARE,
    executor: SlurmExecutor | None = None,
    forked: bool = DEFAULT_FORKED,
) -> RoundTripResult:
    """Round trip of every distinct fusion of the live capture ``live`` (or of the per-rank captures
    of one torchrun session: several files, or a folder of ``NAME.rank<N>.json``) into
    ``directory``; see the module docstring. ``devices`` defaults to :func:`visible_devices`,
    ``replay`` to :func:`replay_in_child`. With ``prestart`` (and a ``replay`` that can start ahead,
    as the real one can), each worker keeps ``ahead`` replay processes started beyond the one
    timing; without it (``--no-prestart``, the reference), each process starts in its turn.
    ``prepare`` says how far a process started ahead goes before its turn (``"imports"``;
    ``"handover"``: its imports, then its turn starts as the one before it has taken its samples;
    ``"context"``: also its CUDA context and the profiler opened once; ``"gpu"``: also its scripts
    run and compiled; on the GPU never while another process samples there;
    :mod:`fusiondiff.replay.stages`). With ``forked`` (``--processes forked``, the default), the
    processes started ahead are forked from one server that imported torch and nvFuser once
    (:mod:`fusiondiff.replay.fork_server`) instead of started as fresh interpreters. On Ctrl-C,
    the replays running are stopped, what finished is kept, the merged capture and diff are written
    of it, and the result says ``interrupted``. With
    ``executor`` (:class:`fusiondiff.roundtrip.slurm.SlurmExecutor`) the replays run as its job
    array instead of local workers, and land in the same places."""
    if batch < 1:
        raise FusionDiffError("--batch needs a number of scripts per process, 1 or more")
    if ahead < 1:
        raise FusionDiffError("--ahead needs a number of processes started ahead, 1 or more")
    if prepare not in PREPARE_CHOICES:
        raise FusionDiffError(f"--prepare-ahead is one of {', '.join(PREPARE_CHOICES)}, not {prepare!r}")
    directory = Path(directory)
    relay = progress  # the replay processes' own lines: to stderr as they come where none is given
    progress = progress or silent
    sources = load_live_sources(live)
    capture = combine_ranks(sources)
    several = len(sources) > 1
    ranks = [source_of(sources, i).rank for i in range(len(capture.fusions))] if several else None
    devices = tuple(devices) if devices is not None else tuple(visible_devices())
    token = f"{os.getpid()}-{time.time_ns()}"
    isolation = isolation_words(batch)
    distinct = distinct_fusions(capture, ranks)
    scripts_dir, replays_dir, logs_dir = directory / "scripts", directory / "replays", directory / "logs"
    # DIR is checked before anything is written there: no link, no input inside what it writes
    check_folder(directory, [s.path for s in sources] + tensors_files(sources))
    not_replayed: dict[int, str] = {}
    planned = plan_scripts(capture, sources, distinct, scripts_dir, not_replayed)
    ties = {index: script.tie for index, script in planned.items()}
    pending = [
        d for d in distinct if d.index in planned and not trusted_replay(replays_dir / f"{d.stem}.json", ties[d.index])
    ]
    # the real replay checks for torch and nvFuser before a script is written; a round trip whose
    # replays are all kept from an earlier run needs neither (it only merges and diffs)
    real_replays = replay is None and bool(pending)
    replay = replay or (
        replay_in_child(options, timeout_s, token, gate=child_gate(prepare), forked=forked, relay=relay)
        if pending
        else nothing_to_replay
    )
    scripts = write_scripts(planned)
    resumed = sum(1 for d in distinct if d.index not in not_replayed) - len(pending)
    across = f" across {len(sources)} ranks" if several else ""
    progress(
        f"fusiondiff roundtrip: {len(capture.fusions)} live fusion record(s), {len(distinct)} distinct{across}; "
        f"{resumed} already replayed, {len(pending)} to replay "
        + (executor.words() if executor else f"on {len(devices)} worker(s) ({device_words(devices)})")
        + f", {isolation}"
    )
    if real_replays:
        from fusiondiff.replay.process_setup import uncompiled_imports

        slow_imports = uncompiled_imports()
        if slow_imports is not None:
            progress(f"fusiondiff roundtrip: note: {slow_imports}")

    start_ahead: StartAhead | None = getattr(replay, "start", None) if prestart else None
    # the turn-taking, the same on this machine's workers and on each Slurm task's node
    turns = TurnTaking(
        ahead=ahead,
        staged=child_gate(prepare) in STAGED_GATES,
        prepare_limit_s=timeout_s,
        prepare_beside=prepare != PREPARE_HANDOVER,
    )
    plan = ReplayPlan(tuple(pending), batch, scripts, ties, replays_dir, logs_dir)
    on_slurm = executor.work(plan, replay, progress, clock, prestart, turns) if executor is not None else None
    work: Workers | SlurmWork = (
        on_slurm if on_slurm is not None else Workers(plan, devices, replay, progress, clock, start_ahead, turns)
    )
    interrupted = False
    with replays_open(replay):  # a fork server, if the replays made one, outlives the workers' stop
        try:
            work.run()
        except KeyboardInterrupt:
            interrupted = True
            work.stop()
            _stop_replays(token)
            work.join()
            progress("fusiondiff roundtrip: interrupted; the replays that finished are kept, a rerun resumes")
        except BaseException:  # SIGTERM (the command line's Terminated), an internal error: no orphans
            work.stop()
            _stop_replays(token)
            raise
    not_replayed.update(work.failures)
    result = finish(
        capture,
        sources,
        directory,
        distinct,
        ties,
        isolation,
        devices,
        work.replayed,
        resumed,
        not_replayed,
        interrupted,
    )
    result = dataclasses.replace(
        result,
        processes=tuple(work.processes),
        started_ahead=start_ahead is not None,
        ahead=ahead if start_ahead is not None else 0,
        prepared_ahead=prepare if start_ahead is not None else "",
        # on Slurm, each task's node had a server of its own
        forked=(start_ahead is not None and on_slurm.forked)
        if on_slurm is not None
        else forked_ahead(replay, start_ahead),
    )
    from fusiondiff.io.files import write_text
    from fusiondiff.report.layout import DEFAULT_WIDTH
    from fusiondiff.roundtrip.summary import SUMMARY_FILE, render_summary

    # every row (the terminal gets fewer), laid out for 100 columns as a piped summary is; never
    # through a link planted at DIR/summary.txt
    write_text(directory / SUMMARY_FILE, render_summary(result, limit=None, width=DEFAULT_WIDTH), devices=False)
    return result


def _stop_replays(token: str) -> None:
    """Stop the replay processes of this run (their process groups), found by the marker in
    their environment. Linux only (``/proc``); elsewhere they stop at their timeout."""
    import signal

    proc = Path("/proc")
    if not proc.is_dir():
        return
    marker = f"{TOKEN_ENV}={token}".encode()
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if marker in environ.split(b"\0"):
            try:
                os.killpg(int(entry.name), signal.SIGKILL)  # each replay leads its own group
            except (ProcessLookupError, PermissionError):
                pass
