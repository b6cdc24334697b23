"""The workers of a round trip: one per GPU, each taking batches of distinct fusions from a queue
and replaying them, with the processes it keeps started ahead (their stages, their turn on the GPU,
their cancellation), keeping each replay as it ends and reporting progress."""

from __future__ import annotations

import dataclasses
import os
import queue
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from fusiondiff.records.errors import CaptureFormatError, FusionDiffError, ReplayError
from fusiondiff.records.model import FusionRecord
from fusiondiff.records.progress import Progress
from fusiondiff.replay.stages import (
    COMPILING,
    DEFAULT_AHEAD,
    ENDED,
    IMPORTED,
    PREPARING,
    STARTING,
    TIMED,
    TIMING,
)
from fusiondiff.roundtrip.folder import (
    clear_stale,
    owned,
)
from fusiondiff.roundtrip.plan import (
    batches,
)
from fusiondiff.roundtrip.records import DistinctFusion, ReplayPlan, ReplayProcess
from fusiondiff.roundtrip.replays import (
    ReplayFunction,
    StagedReplay,
    StartAhead,
    StartedReplay,
)

POLL_S = 0.01
"""How often a worker looks at its spares' stages while it waits for one."""


@dataclasses.dataclass(frozen=True)
class TurnTaking:
    """How a worker's replay processes take their turns on its GPU: the same on this machine and on
    each node of a Slurm job array (``--ahead``, ``--prepare-ahead``, ``--timeout``)."""

    ahead: int = DEFAULT_AHEAD
    """Processes a worker keeps started beyond the one timing."""
    staged: bool = False
    """The processes started ahead are :class:`StagedReplay`: they prepare on the GPU when told."""
    prepare_limit_s: float = 900.0
    """A spare still preparing after this long is stopped and its batch runs in its turn."""
    prepare_beside: bool = True
    """Staged spares prepare on the GPU while another's turn runs (``context``, ``gpu``); False
    (``handover``): a spare touches the GPU only when its own turn starts, which is as the process
    before it has taken its samples."""


DEFAULT_TURNS = TurnTaking()
"""One process started ahead, gated at its imports (:mod:`fusiondiff.replay.stages`' defaults)."""


class Workers:
    """The queue of batches and the workers that empty it, one thread per device; each thread runs
    one replay process at a time (the process is what is fresh, not the thread)."""

    def __init__(
        self,
        plan: ReplayPlan,
        devices: Sequence[str | None],
        replay: ReplayFunction,
        progress: Progress,
        clock: Callable[[], float],
        start_ahead: StartAhead | None = None,
        turns: TurnTaking = DEFAULT_TURNS,
    ) -> None:
        self.start_ahead = start_ahead
        """Starts a replay process ahead of its turn; None: each starts in its turn."""
        self.turns = turns
        self.plan = plan
        """The fusions, their scripts and ties to the plan (the source a kept replay carries,
        folder.plan_tie), and where the replays and logs go."""
        self.queue: queue.Queue[list[DistinctFusion]] = queue.Queue()
        for group in batches(plan.fusions, plan.batch):
            self.queue.put(group)
        self.total = len(plan.fusions)
        self.devices = list(devices)
        self.replay = replay
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
        held: list[_Spare] = []
        """This worker's processes started ahead, in queue order; the first is next to time."""
        try:
            while not self.stopping.is_set():
                self._top_up(held, device)
                if held:
                    spare = held.pop(0)
                    group, pending = spare.group, spare.replay
                    turn = self.clock()
                    # the next ones import while this one takes its turn: K spares beside it, not K - 1
                    # (on the H200 a spare takes 9-11 s to be ready and a turn 0.4-4 s)
                    self._top_up(held, device)
                    if self.turns.staged and _is_staged(pending):
                        self._take_turn(spare, held)
                    if self.stopping.is_set():  # stopped before its turn: not replayed, a rerun does it
                        pending.cancel()
                        return
                    deadline = spare.turn_deadline
                else:
                    try:
                        group = self.queue.get_nowait()
                    except queue.Empty:
                        return
                    pending, turn, deadline = None, self.clock(), None
                with self.lock:
                    self.assignments.append((device, tuple(d.index for d in group)))
                retry = self._run_batch(group, device, pending, turn, deadline)
                for d in retry:  # a batch's left-overs go again, alone
                    self.queue.put([d])
        except OSError as exc:  # a full or read-only disk under DIR: one line, not a thread's traceback
            from fusiondiff.records.errors import OutputError

            where = f" ({exc.filename})" if isinstance(exc.filename, str) else ""
            self.errors.append(OutputError(f"the round trip cannot write under DIR: {exc.strerror or exc}{where}"))
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            self.errors.append(exc)
        finally:
            for spare in held:  # stopped before their turn: not replayed, a rerun does them
                spare.replay.cancel()

    def _top_up(self, held: list[_Spare], device: str | None) -> None:
        """Start processes ahead until this worker holds :attr:`TurnTaking.ahead` of them, so their imports
        overlap the replay about to run. At the end of the queue a worker may hold batches while
        another has none: those held have their imports done, so they still end about when a cold
        start elsewhere would."""
        while self.start_ahead is not None and len(held) < self.turns.ahead and not self.stopping.is_set():
            try:
                group = self.queue.get_nowait()
            except queue.Empty:
                return
            output = self._output_for(group)
            clear_stale(output)
            try:
                started = self.start_ahead([str(self.plan.scripts[d.index]) for d in group], output, device)
            except ReplayError:
                self.queue.put(group)  # it could not start ahead: it runs in its turn, and says why
                return
            held.append(_Spare(group, started))

    def _take_turn(self, spare: _Spare, held: list[_Spare]) -> None:
        """Bring ``spare`` (a :class:`StagedReplay`) to its samples without another process touching
        this GPU while it takes them: while nothing samples here, every spare that has imported is
        let prepare (context, scripts, compile, the profiler's first window: all at once, each on
        its own cores); before ``spare`` samples, the preparations under way end and no other
        starts; once it has timed (it writes its capture and exits), the others prepare again. One
        gated at the context (``--prepare-ahead context``) runs its scripts at the start of its turn
        while the others may still prepare, and holds its samples until they are done.
        Creating a context, loading modules and launching a script's kernels all reach the GPU,
        so none of it may overlap a neighbour's samples; a prepared spare waits idle (its context
        holds memory, not SMs). Under ``handover`` (:attr:`TurnTaking.prepare_beside` False) no
        spare prepares beside a turn: the next one's turn is all that starts early, once this one
        has timed."""
        replay = _staged(spare.replay)
        # gated at the context, its turn starts with its scripts (the compile), beside its own
        # profiler's start-up and the others' preparations; one gated at the GPU prepares first
        self._start_turn(spare)
        while replay.stage() in (STARTING, IMPORTED, PREPARING) and self._waiting(spare):
            replay.prepare()  # read at its gate when its imports are done
            self._let_prepare(held)
            time.sleep(POLL_S)
        deadline = spare.turn_deadline or self.clock() + self.turns.prepare_limit_s
        while replay.stage() == COMPILING and not self.stopping.is_set() and self.clock() < deadline:
            self._let_prepare(held)
            time.sleep(POLL_S)
        while any(_stage(s) == PREPARING and self._waiting(s) for s in held):
            time.sleep(POLL_S)
        for s in [s for s in held if _stage(s) == PREPARING]:  # past the limit, or the run stops
            held.remove(s)
            s.replay.cancel()
            self.queue.put(s.group)  # it runs in its turn, under its timeout
        replay.sample()
        # its samples; past the limit (a hung child) the turn's own timeout takes over in run()
        deadline = spare.turn_deadline or self.clock() + self.turns.prepare_limit_s
        while replay.stage() == TIMING and not self.stopping.is_set() and self.clock() < deadline:
            time.sleep(POLL_S)
        self._let_prepare(held)
        if replay.stage() in (TIMED, ENDED) and held and _is_staged(held[0].replay):
            # its samples are taken: the next turn's compile may run while this process writes and
            # exits; the next samples still wait for its exit (the worker's turns are in order)
            self._start_turn(held[0])

    def _start_turn(self, spare: _Spare) -> None:
        """Tell a spare its turn has come: one gated at the context runs its scripts as soon as its
        context is made (its samples held), and from then its scripts, samples and capture share one
        timeout (:attr:`TurnTaking.prepare_limit_s`, the run's ``--timeout``), so a hung script holds the GPU
        for one timeout, not one per stage; one gated at the GPU goes on preparing."""
        replay = _staged(spare.replay)
        replay.prepare()
        replay.start_turn()
        if spare.turn_deadline is None and replay.stage() == COMPILING:
            spare.turn_deadline = self.clock() + self.turns.prepare_limit_s

    def _let_prepare(self, held: list[_Spare]) -> None:
        if not self.turns.prepare_beside:
            return  # handover: a spare reaches the GPU only as its own turn starts
        for s in held:
            if _stage(s) == IMPORTED:
                s.prepare_sent = self.clock()
                _staged(s.replay).prepare()

    def _waiting(self, spare: _Spare) -> bool:
        """Whether to go on waiting for ``spare``'s preparation: not when the run is stopping, nor
        past :attr:`TurnTaking.prepare_limit_s` (a script that never ends; its turn's timeout then applies)."""
        if self.stopping.is_set():
            return False
        if spare.prepare_sent is None:
            spare.prepare_sent = self.clock()
        return self.clock() - spare.prepare_sent < self.turns.prepare_limit_s

    def _output_for(self, group: list[DistinctFusion]) -> Path:
        output = self.plan.logs_dir / f"{group[0].stem}{'' if len(group) == 1 else f'+{len(group) - 1}'}.json"
        output.parent.mkdir(parents=True, exist_ok=True)
        return output

    def _run_batch(
        self,
        group: list[DistinctFusion],
        device: str | None,
        pending: StartedReplay | None = None,
        started: float | None = None,
        deadline: float | None = None,
    ) -> list[DistinctFusion]:
        """Replay one batch (``pending``: in the process already started for it; ``started``: when
        its turn began; ``deadline``: when its turn's timeout ends, if it began before ``run``), keep
        each fusion's replay; returns the fusions to retry alone."""
        output = self._output_for(group)
        message = ""
        started = self.clock() if started is None else started
        try:
            if pending is not None:
                pending.run(None if deadline is None else max(deadline - self.clock(), 0.0))
            else:
                clear_stale(output)  # only what this process writes is read after it
                self.replay([str(self.plan.scripts[d.index]) for d in group], output, device)
        except ReplayError as exc:
            message = str(exc)
        ended = self.clock()
        with self.lock:
            self.processes.append(
                ReplayProcess(device, len(group), ended - started, ended_s=ended - self.started, log=output.name)
            )
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
        from fusiondiff.io.store import load_capture, save_capture
        from fusiondiff.io.timelines import copied

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
                dataclasses.replace(f, name=f"{stem}:{name}", failure=_moved_log(f, output, self.plan.replays_dir))
            )
        kept = set()
        for stem, records in fusions.items():
            tie = self.plan.ties[by_stem[stem].index]
            one = dataclasses.replace(replayed, fusions=tuple(records), source=tie, tensors_file=None)
            target = owned(self.plan.replays_dir / f"{stem}.json")
            save_capture(copied(one, output, target), target, devices=False)
            kept.add(by_stem[stem].index)
        return kept

    def _report(self, done: int) -> None:
        elapsed = self.clock() - self.started
        left = max(self.total - done, 0)
        eta = "" if done == 0 or left == 0 else f", about {wall_time(elapsed / done * left)} left"
        failed = f" ({len(self.failures)} failed)" if self.failures else ""
        self.progress(
            f"fusiondiff roundtrip: {_bar(done, self.total)} {done}/{self.total} done{failed}, "
            f"{wall_time(elapsed)} elapsed{eta}"
        )


@dataclasses.dataclass
class _Spare:
    """A batch whose replay process a worker started ahead of its turn."""

    group: list[DistinctFusion]
    replay: StartedReplay
    prepare_sent: float | None = None
    """When it was let prepare on the GPU (the worker's clock)."""
    turn_deadline: float | None = None
    """Gated at the context: when the timeout of its turn, begun with its scripts, ends."""


def _is_staged(replay: StartedReplay | None) -> bool:
    """Whether a process started ahead can prepare on the GPU when told (a replay that cannot is
    run as one gated at its imports)."""
    return replay is not None and callable(getattr(replay, "stage", None))


def _staged(replay: StartedReplay) -> StagedReplay:
    return replay  # type: ignore[return-value]  # checked by _is_staged


def _stage(spare: _Spare) -> str | None:
    """A spare's stage, None for one that cannot be staged."""
    return _staged(spare.replay).stage() if _is_staged(spare.replay) else None


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


def wall_time(seconds: float) -> str:
    """``seconds`` of waiting as a person reads them: ``42 s``, ``3 min 05 s``, ``1 h 02 min``."""
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"
