"""The run: scripts written, replays fed from a queue to one worker per GPU, each replay kept as it
ends (a rerun resumes), a stop leaving no process behind."""

from __future__ import annotations

import dataclasses
import os
import queue
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fusiondiff.errors import CaptureFormatError, FusionDiffError, ReplayError
from fusiondiff.model import FusionRecord
from fusiondiff.options import RecordingOptions
from fusiondiff.progress import Progress, silent
from fusiondiff.roundtrip.folder import (
    check_folder,
    clear_stale,
    owned,
    plan_scripts,
    tensors_files,
    trusted_replay,
    write_scripts,
)
from fusiondiff.roundtrip.plan import (
    batches,
    combine_ranks,
    device_words,
    distinct_fusions,
    isolation_words,
    load_live_sources,
    source_of,
    visible_devices,
)
from fusiondiff.roundtrip.records import DistinctFusion, ReplayProcess, RoundTripResult
from fusiondiff.roundtrip.replays import (
    TOKEN_ENV,
    ReplayFunction,
    StartAhead,
    StartedReplay,
    nothing_to_replay,
    replay_in_child,
)
from fusiondiff.roundtrip.results import finish

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
    executor: SlurmExecutor | None = None,
) -> RoundTripResult:
    """Round trip of every distinct fusion of the live capture ``live`` (or of the per-rank captures
    of one torchrun session: several files, or a folder of ``NAME.rank<N>.json``) into
    ``directory``; see the module docstring. ``devices`` defaults to :func:`visible_devices`,
    ``replay`` to :func:`replay_in_child`. With ``prestart`` (and a ``replay`` that can start ahead,
    as the real one can), each worker starts its next replay process while one runs; without it,
    each process starts in its turn. On Ctrl-C, the replays running are stopped, what finished is
    kept, the merged capture and diff are written of it, and the result says ``interrupted``. With
    ``executor`` (:class:`fusiondiff.roundtrip.slurm.SlurmExecutor`) the replays run as its job
    array instead of local workers, and land in the same places."""
    if batch < 1:
        raise FusionDiffError("--batch needs a number of scripts per process, 1 or more")
    directory = Path(directory)
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
    replay = replay or (replay_in_child(options, timeout_s, token) if pending else nothing_to_replay)
    scripts = write_scripts(planned)
    resumed = sum(1 for d in distinct if d.index not in not_replayed) - len(pending)
    across = f" across {len(sources)} ranks" if several else ""
    progress(
        f"fusiondiff roundtrip: {len(capture.fusions)} live fusion record(s), {len(distinct)} distinct{across}; "
        f"{resumed} already replayed, {len(pending)} to replay "
        + (executor.words() if executor else f"on {len(devices)} worker(s) ({device_words(devices)})")
        + f", {isolation}"
    )

    start_ahead: StartAhead | None = getattr(replay, "start", None) if prestart else None
    work: _Work | SlurmWork = (
        executor.work(pending, batch, replay, scripts, ties, replays_dir, logs_dir, progress, clock, prestart)
        if executor is not None
        else _Work(pending, batch, devices, replay, scripts, ties, replays_dir, logs_dir, progress, clock, start_ahead)
    )
    interrupted = False
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
    result = dataclasses.replace(result, processes=tuple(work.processes), started_ahead=start_ahead is not None)
    from fusiondiff.roundtrip.summary import SUMMARY_FILE, render_summary
    from fusiondiff.store import write_text

    write_text(directory / SUMMARY_FILE, render_summary(result, limit=None))  # every row; the terminal gets fewer
    return result


class _Work:
    """The queue of batches and the workers that empty it, one thread per device; each thread runs
    one replay process at a time (the process is what is fresh, not the thread)."""

    def __init__(
        self,
        pending: Sequence[DistinctFusion],
        batch: int,
        devices: Sequence[str | None],
        replay: ReplayFunction,
        scripts: dict[int, Path],
        ties: dict[int, str],
        replays_dir: Path,
        logs_dir: Path,
        progress: Progress,
        clock: Callable[[], float],
        start_ahead: StartAhead | None = None,
    ) -> None:
        self.start_ahead = start_ahead
        """Starts a replay process ahead of its turn; None: each starts in its turn."""
        self.queue: queue.Queue[list[DistinctFusion]] = queue.Queue()
        for group in batches(pending, batch):
            self.queue.put(group)
        self.total = len(pending)
        self.devices = list(devices)
        self.replay = replay
        self.scripts = scripts
        self.ties = ties
        """Each script's tie to the plan, the source its kept replay carries (folder.plan_tie)."""
        self.replays_dir = replays_dir
        self.logs_dir = logs_dir
        self.progress = progress
        self.clock = clock
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.replayed = 0
        self.failures: dict[int, str] = {}
        self.processes: list[ReplayProcess] = []
        """Every replay process started, with its wall time, in the order they ended."""
        self.assignments: list[tuple[str | None, tuple[int, ...]]] = []
        """(device, distinct fusion indices) of every batch started, in order: which GPU ran what."""
        self.threads: list[threading.Thread] = []
        self.started = clock()
        self.errors: list[BaseException] = []

    def run(self) -> None:
        if self.total == 0:
            return
        self.threads = [
            threading.Thread(target=self._worker, args=(device,), name=f"fusiondiff-roundtrip-{device}", daemon=True)
            for device in self.devices[: max(1, min(len(self.devices), self.queue.qsize()))]
        ]
        for thread in self.threads:
            thread.start()
        # join in short steps: the main thread must stay interruptible by Ctrl-C
        for thread in self.threads:
            while thread.is_alive():
                thread.join(timeout=0.2)
        if self.errors:
            raise self.errors[0]

    def stop(self) -> None:
        self.stopping.set()

    def join(self) -> None:
        for thread in self.threads:
            thread.join(timeout=30)

    def _worker(self, device: str | None) -> None:
        spare: tuple[list[DistinctFusion], StartedReplay] | None = None
        try:
            while not self.stopping.is_set():
                if spare is not None:
                    (group, pending), spare = spare, None
                else:
                    try:
                        group = self.queue.get_nowait()
                    except queue.Empty:
                        return
                    pending = None
                with self.lock:
                    self.assignments.append((device, tuple(d.index for d in group)))
                spare = self._start_spare(device)
                retry = self._run_batch(group, device, pending)
                for d in retry:  # a batch's left-overs go again, alone
                    self.queue.put([d])
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            self.errors.append(exc)
        finally:
            if spare is not None:  # stopped before its turn: not replayed, a rerun does it
                spare[1].cancel()

    def _start_spare(self, device: str | None) -> tuple[list[DistinctFusion], StartedReplay] | None:
        """Start this worker's next replay process now, so its imports overlap the replay about to
        run. At the end of the queue a worker may hold the last batch while another has none: the
        one held has its imports done, so it still ends about when a cold start elsewhere would."""
        if self.start_ahead is None or self.stopping.is_set():
            return None
        try:
            group = self.queue.get_nowait()
        except queue.Empty:
            return None
        output = self._output_for(group)
        clear_stale(output)
        try:
            return group, self.start_ahead([str(self.scripts[d.index]) for d in group], output, device)
        except ReplayError:
            self.queue.put(group)  # it could not start ahead: it runs in its turn, and says why
            return None

    def _output_for(self, group: list[DistinctFusion]) -> Path:
        output = self.logs_dir / f"{group[0].stem}{'' if len(group) == 1 else f'+{len(group) - 1}'}.json"
        output.parent.mkdir(parents=True, exist_ok=True)
        return output

    def _run_batch(
        self, group: list[DistinctFusion], device: str | None, pending: StartedReplay | None = None
    ) -> list[DistinctFusion]:
        """Replay one batch (``pending``: in the process already started for it), keep each
        fusion's replay; returns the fusions to retry alone."""
        output = self._output_for(group)
        message = ""
        started = self.clock()
        try:
            if pending is not None:
                pending.run()
            else:
                clear_stale(output)  # only what this process writes is read after it
                self.replay([str(self.scripts[d.index]) for d in group], output, device)
        except ReplayError as exc:
            message = str(exc)
        with self.lock:
            self.processes.append(ReplayProcess(device, len(group), self.clock() - started))
        if self.stopping.is_set() and not output.exists():
            return []
        kept = self._split(group, output) if output.exists() else set()
        retry = []
        with self.lock:
            for d in group:
                if d.index in kept:
                    self.replayed += 1
                elif len(group) > 1 and kept and not self.stopping.is_set():
                    # part of the batch ran (a lost CUDA context stops the rest): the rest alone;
                    # a batch that recorded nothing failed for a reason a retry would meet again
                    retry.append(d)  # counted when it has run alone
                else:
                    self.failures[d.index] = message or "the replay recorded no fusion for this script"
            done = self.replayed + len(self.failures)
            self._report(done)
        return retry

    def _split(self, group: list[DistinctFusion], output: Path) -> set[int]:
        """Write one replay capture per script of the batch, ``DIR/replays/<stem>.json``."""
        from fusiondiff.blocks.storage import copied
        from fusiondiff.store import load_capture, save_capture

        try:
            replayed = load_capture(output)
        except (CaptureFormatError, FusionDiffError):
            return set()
        by_stem = {d.stem: d for d in group}
        fusions: dict[str, list[FusionRecord]] = {}
        for f in replayed.fusions:
            if len(group) == 1:
                stem, name = group[0].stem, f.name
            else:
                stem, _, name = f.name.partition(":")
            if stem not in by_stem:
                continue
            fusions.setdefault(stem, []).append(
                dataclasses.replace(f, name=f"{stem}:{name}", failure=_moved_log(f, output, self.replays_dir))
            )
        kept = set()
        for stem, records in fusions.items():
            tie = self.ties[by_stem[stem].index]
            one = dataclasses.replace(replayed, fusions=tuple(records), source=tie, tensors_file=None)
            target = owned(self.replays_dir / f"{stem}.json")
            save_capture(copied(one, output, target), target)
            kept.add(by_stem[stem].index)
        return kept

    def _report(self, done: int) -> None:
        elapsed = self.clock() - self.started
        left = max(self.total - done, 0)
        eta = "" if done == 0 or left == 0 else f", about {_duration(elapsed / done * left)} left"
        failed = f" ({len(self.failures)} failed)" if self.failures else ""
        self.progress(
            f"fusiondiff roundtrip: {_bar(done, self.total)} {done}/{self.total} done{failed}, "
            f"{_duration(elapsed)} elapsed{eta}"
        )


def _moved_log(f: FusionRecord, output: Path, replays_dir: Path) -> Any:
    """A failure's log file, named from where the per-fusion capture now is."""
    if f.failure is None or not f.failure.log_file:
        return f.failure
    log = output.parent / f.failure.log_file
    return dataclasses.replace(f.failure, log_file=os.path.relpath(log, replays_dir))


def _bar(done: int, total: int, width: int = 20) -> str:
    """``[########............]``: one line per replay, so the log of a run reads like a bar
    that fills (the replays' own lines come between, so it is not redrawn in place)."""
    filled = width * done // total if total else width
    return "[" + "#" * filled + "." * (width - filled) + "]"


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


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
