"""The round trip's replays on a Slurm cluster (``--executor slurm``), through submitit.

The distinct fusions to replay are cut into array tasks of ``batches_per_task`` batches (of
``--batch`` scripts each). Each array task runs :func:`run_task` on its node: the local pipeline's
own workers (:class:`fusiondiff.roundtrip.workers.Workers`, one per GPU the task was given) around the
same replay function, writing each fusion's replay to ``DIR/replays`` and its logs to ``DIR/logs``
exactly as a local run does, so a rerun resumes and the merge and diff are the local ones. DIR must
be on a file system the nodes share with the submitting host (submitit's own folder is
``DIR/slurm``). submitit pickles :func:`run_task` and its :class:`SlurmTask` (the replay function
included) to the job; the captures stay JSON files.

The Slurm path trusts nothing it did not just create. Each submission gets a folder of its own,
``DIR/slurm/<time>-<random>``, made by this run (mode 0700; one that exists is refused), in which
submitit keeps its job folders; a task's outcome comes back as JSON that the task wrote there
(:data:`OUTCOMES`), read as a bounded regular file and checked against the task's own fusions. The
pickle submitit leaves beside it (``*_result.pkl``) is never read by the submitting process: a file
planted there would run code in it. The Slurm parameters are checked before anything is written
(:class:`SlurmSettings`): partition names by Slurm's own characters (no line break can reach the
batch script), limits in range.

The submitting process waits and says how far the array is; a task that fails (its Python raised,
its node died, its time ran out) has each of its fusions not kept reported failed with the last
telling line of the job's stderr; a task that left the queue without a result is seen through ``squeue``, so a
cluster without accounting (no ``sacct``) cannot leave the wait hanging. Ctrl-C cancels the jobs
(``scancel``), and what landed is kept.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from fusiondiff.records.errors import FusionDiffError, MissingPackageError
from fusiondiff.records.progress import Progress
from fusiondiff.roundtrip.records import ReplayPlan, ReplayProcess
from fusiondiff.roundtrip.replays import ReplayFunction, forked_ahead, replays_open
from fusiondiff.roundtrip.workers import DEFAULT_TURNS, TurnTaking, Workers, wall_time

INSTALL = "pip install 'fusiondiff[cluster]'"
"""How to install submitit, the one package the Slurm executor needs."""

EXECUTORS = ("local", "slurm")

SLURM_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}(,[A-Za-z0-9_.\-]{1,128}){0,63}")
"""A partition (or a comma-separated list of them), in the characters Slurm's names are made of."""
MAX_TIME_MIN = 366 * 24 * 60
"""The longest time limit taken for one array task (a year), minutes."""
MAX_GPUS_PER_TASK = 1024
MAX_BATCHES_PER_TASK = 1_000_000
COMMANDS = ("sbatch", "srun", "squeue", "scancel")
"""Slurm's commands the executor runs (``srun`` in the batch script submitit writes)."""
OUTCOMES = "outcomes"
"""Under a submission's folder: ``<task>.json``, each array task's :class:`TaskOutcome`, written by the task."""
MAX_OUTCOME_BYTES = 64 << 20
STDERR_TAIL_BYTES = 64 << 10
"""How much of a failed task's stderr is read for its last telling line (from its end)."""


@dataclasses.dataclass(frozen=True)
class SlurmSettings:
    """Where and how the array runs."""

    partition: str | None = None
    """Slurm partition (``None``: the cluster's default)."""
    gpus_per_task: int = 1
    """GPUs per array task (0: none requested, for a cluster without GPUs or a test)."""
    batches_per_task: int = 8
    """Batches of ``--batch`` fusions per array task."""
    time_min: int = 60
    """Time limit of one array task, minutes."""
    poll_s: float = 5.0
    """Seconds between two looks at the array."""

    def __post_init__(self) -> None:
        from fusiondiff.records.escape import printable

        if self.partition is not None and (
            not isinstance(self.partition, str) or not SLURM_NAME.fullmatch(self.partition)
        ):
            raise FusionDiffError(
                f"--partition {printable(str(self.partition))!s} is not a Slurm partition name: letters, digits, "
                "'_', '.', '-' (several separated by ',')"
            )
        for name, value, low, high in (
            ("--gpus-per-task", self.gpus_per_task, 0, MAX_GPUS_PER_TASK),
            ("--batches-per-task", self.batches_per_task, 1, MAX_BATCHES_PER_TASK),
            ("--time-limit", self.time_min, 1, MAX_TIME_MIN),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise FusionDiffError(f"{name} takes a whole number from {low} to {high}, not {value!r}")
        if not isinstance(self.poll_s, (int, float)) or not 0 < self.poll_s <= 3600:
            raise FusionDiffError(f"the Slurm poll interval takes 0 to 3600 s, not {self.poll_s!r}")


@dataclasses.dataclass(frozen=True)
class SlurmTask:
    """What one array task replays, and where it writes: all a node needs (picklable)."""

    plan: ReplayPlan
    """Its share of the round trip's plan: its fusions, with their scripts and ties only."""
    replay: ReplayFunction
    prestart: bool
    turns: TurnTaking = DEFAULT_TURNS
    """How the replay processes take their turns on each GPU of the node, as on the submitting machine."""
    outcome: Path | None = None
    """Where the task writes its :class:`TaskOutcome` (JSON) for the submitting process, in the
    submission's own folder (set when it is submitted)."""


@dataclasses.dataclass(frozen=True)
class TaskOutcome:
    """What one array task returns to the submitting process."""

    replayed: tuple[int, ...]
    """Distinct fusions (indices) whose replay it kept."""
    failures: dict[int, str]
    """Distinct fusions it could not replay, and why."""
    processes: tuple[ReplayProcess, ...]
    """Its replay processes, with their wall times."""
    forked: bool = False
    """Whether its replay processes were forked from a server on its node (``--processes forked``);
    false where none was asked for, or where that server could not serve and each started fresh."""


def require_submitit() -> None:
    """Raise :class:`MissingPackageError` naming the install command when submitit is absent."""
    if importlib.util.find_spec("submitit") is None:
        raise MissingPackageError(f"--executor slurm needs submitit, which is not installed: {INSTALL}")


def write_outcome(path: Path, outcome: TaskOutcome) -> None:
    """``outcome`` as JSON at ``path`` (atomically, through no link)."""
    from fusiondiff.io.files import write_text

    write_text(path, msgspec.json.encode(outcome).decode(), devices=False)


def read_outcome(path: Path, task: SlurmTask) -> TaskOutcome | str:
    """The outcome a task wrote at ``path``, or why it cannot be taken: a bounded regular file,
    decoded as a :class:`TaskOutcome` (no code runs from it), naming only the task's own fusions."""
    from fusiondiff.io.files import read_bounded

    try:
        raw = read_bounded(path, MAX_OUTCOME_BYTES, what="task outcome")
    except FileNotFoundError:
        return "it wrote no outcome"
    except OSError as exc:
        return f"its outcome cannot be read: {exc.strerror or exc}"
    try:
        outcome = msgspec.json.decode(raw, type=TaskOutcome)
    except msgspec.DecodeError as exc:
        return f"its outcome is not one fusiondiff wrote ({_last_line(str(exc))[:200]})"
    ours = {d.index for d in task.plan.fusions}
    if not set(outcome.replayed) | set(outcome.failures) <= ours:
        return "its outcome names fusions that are not its own"
    return outcome


def run_task(task: SlurmTask) -> TaskOutcome:
    """One array task, on its node: the local workers (one per GPU Slurm gave it) over its fusions.
    Progress goes to the job's stderr, its log; the outcome to :attr:`SlurmTask.outcome` (the
    submitting process never reads the pickle submitit makes of the value returned)."""
    from fusiondiff.roundtrip.plan import visible_devices

    def progress(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    start_ahead = getattr(task.replay, "start", None) if task.prestart else None
    work = Workers(task.plan, visible_devices(), task.replay, progress, time.monotonic, start_ahead, task.turns)
    with replays_open(task.replay):  # a fork server, if the replays made one, outlives the workers' stop
        try:
            work.run()
        except BaseException:
            work.stop()
            work.join()
            raise
    replayed = tuple(
        d.index
        for d in task.plan.fusions
        if d.index not in work.failures and (task.plan.replays_dir / f"{d.stem}.json").is_file()
    )
    # what happened on this node: its own server may have failed where the submitting machine's did not
    outcome = TaskOutcome(replayed, dict(work.failures), tuple(work.processes), forked_ahead(task.replay, start_ahead))
    if task.outcome is not None:
        write_outcome(task.outcome, outcome)
    return outcome


class SlurmExecutor:
    """``roundtrip(executor=SlurmExecutor(...))``: the replays as a Slurm job array."""

    def __init__(self, settings: SlurmSettings) -> None:
        require_submitit()
        if not isinstance(settings, SlurmSettings):
            raise FusionDiffError(f"SlurmExecutor takes a SlurmSettings, not {type(settings).__name__}")
        self.settings = settings

    def words(self) -> str:
        """Where the replays run, for the progress line."""
        where = f"partition {self.settings.partition}" if self.settings.partition else "the default partition"
        return (
            f"as a Slurm job array on {where}, {self.settings.batches_per_task} batch(es) per task, "
            f"{self.settings.gpus_per_task} GPU(s) per task"
        )

    def work(
        self,
        plan: ReplayPlan,
        replay: ReplayFunction,
        progress: Progress,
        clock: Callable[[], float],
        prestart: bool,
        turns: TurnTaking = DEFAULT_TURNS,
    ) -> SlurmWork:
        """The job array's tasks over the plan's fusions; each task's node runs the local workers
        with the same turn-taking as on this machine (``prestart``, ``turns``)."""
        size = plan.batch * self.settings.batches_per_task
        tasks = [
            SlurmTask(plan.part(plan.fusions[k : k + size]), replay, prestart, turns)
            for k in range(0, len(plan.fusions), size)
        ]
        return SlurmWork(self.settings, tasks, plan.replays_dir.parent / "slurm", progress, clock)


class SlurmWork:
    """The array of one round trip, submitted and waited for; read by the round trip as its local
    workers are (:class:`fusiondiff.roundtrip.workers.Workers`): ``run``, ``stop``, ``join``,
    ``replayed``, ``failures``, ``processes``."""

    def __init__(
        self,
        settings: SlurmSettings,
        tasks: Sequence[SlurmTask],
        folder: Path,
        progress: Progress,
        clock: Callable[[], float],
    ) -> None:
        self.settings = settings
        self.tasks = list(tasks)
        self.folder = folder
        self.progress = progress
        self.clock = clock
        self.jobs: list[Any] = []
        self.outcomes: dict[int, TaskOutcome] = {}
        """Per task (position in ``tasks``), once it ended."""
        self.replayed = 0
        self.failures: dict[int, str] = {}
        self.processes: list[ReplayProcess] = []

    def run(self) -> None:
        if not self.tasks:
            return
        missing = [name for name in COMMANDS if shutil.which(name) is None]
        if missing:
            raise FusionDiffError(
                f"--executor slurm needs Slurm's commands on PATH; not found: {', '.join(missing)} "
                "(run on a Slurm login node)"
            )
        import submitit

        self.folder = fresh_submission_folder(self.folder)
        self.tasks = [
            dataclasses.replace(task, outcome=self.folder / OUTCOMES / f"{i}.json") for i, task in enumerate(self.tasks)
        ]
        executor = submitit.SlurmExecutor(folder=self.folder / "%j")
        parameters: dict[str, Any] = {"job_name": "fusiondiff-roundtrip", "time": self.settings.time_min}
        if self.settings.partition:
            parameters["partition"] = self.settings.partition
        if self.settings.gpus_per_task:
            parameters["gpus_per_task"] = self.settings.gpus_per_task
        executor.update_parameters(**parameters)
        try:
            self.jobs = executor.map_array(run_task, self.tasks)
        except Exception as exc:  # noqa: BLE001 - sbatch refused: say what it said, in one line
            raise FusionDiffError(_refusal(str(exc))) from None
        array = str(self.jobs[0].job_id).partition("_")[0]
        fusions = sum(len(t.plan.fusions) for t in self.tasks)
        self.progress(
            f"fusiondiff roundtrip: submitted Slurm job {array}: {len(self.tasks)} array task(s) for {fusions} "
            f"fusion(s); logs in {self.folder}"
        )
        started = self.clock()
        absent: dict[int, int] = {}
        """Per task: how many looks in a row found it neither done nor in the queue."""
        said, said_at = "", started
        while len(self.outcomes) < len(self.tasks):
            queued = _queued(array)
            for i, job in enumerate(self.jobs):
                if i in self.outcomes:
                    continue
                if job.done():
                    self._collect(i, job)
                elif queued is not None and str(job.job_id) not in queued:
                    absent[i] = absent.get(i, 0) + 1
                    if absent[i] >= 3:  # out of the queue with no result: its node or its time ended it
                        self._fail(i, job, "it left the queue without a result")
                else:
                    absent.pop(i, None)
            running = sum(1 for state in (queued or {}).values() if state == "RUNNING")
            waiting = sum(1 for state in (queued or {}).values() if state != "RUNNING")
            line = (
                f"fusiondiff roundtrip: Slurm job {array}: {len(self.outcomes)}/{len(self.tasks)} task(s) done, "
                f"{self.replayed}/{fusions} fusion(s) replayed"
                + (f" ({len(self.failures)} failed)" if self.failures else "")
                + f", {running} running, {waiting} waiting"
            )
            if line != said or self.clock() - said_at >= 60:  # a line a minute while nothing changes
                self.progress(f"{line}, {wall_time(self.clock() - started)} elapsed")
                said, said_at = line, self.clock()
            if len(self.outcomes) < len(self.tasks):
                time.sleep(self.settings.poll_s)

    def stop(self) -> None:
        """Cancel every task not ended (Ctrl-C); the fusions whose replay landed are counted."""
        for i, job in enumerate(self.jobs):
            if i not in self.outcomes:
                job.cancel(check=False)
        for i, task in enumerate(self.tasks):
            if i not in self.outcomes and i < len(self.jobs):
                self.replayed += len(_kept(task))

    def join(self) -> None:
        """Nothing runs here: the tasks run on the cluster."""

    @property
    def forked(self) -> bool:
        """Whether every task that returned forked its replay processes, each from its node's server."""
        return bool(self.outcomes) and all(outcome.forked for outcome in self.outcomes.values())

    def _collect(self, i: int, job: Any) -> None:
        task = self.tasks[i]
        # never job.result(): that unpickles whatever lies in the job's folder
        outcome = read_outcome(task.outcome, task) if task.outcome is not None else "it has no outcome file"
        if isinstance(outcome, str):
            self._fail(i, job, outcome)
            return
        self.outcomes[i] = outcome
        self.replayed += len(outcome.replayed)
        self.failures.update(outcome.failures)
        self.processes.extend(outcome.processes)

    def _fail(self, i: int, job: Any, fallback: str) -> None:
        """Task ``i`` ended without an outcome: each of its fusions not kept fails with the last line
        of the job's stderr (else ``fallback``)."""
        task = self.tasks[i]
        kept = _kept(task)
        reason = _stderr_reason(job) or fallback
        self.outcomes[i] = TaskOutcome(
            tuple(sorted(kept)),
            {d.index: f"Slurm task {job.job_id} failed: {reason}" for d in task.plan.fusions if d.index not in kept},
            (),
        )
        self.replayed += len(kept)
        self.failures.update(self.outcomes[i].failures)


def fresh_submission_folder(slurm: Path) -> Path:
    """A folder for one submission, made now under ``slurm`` (``DIR/slurm``, itself no link), with
    a name no earlier run used and mode 0700: submitit writes its job folders only inside it."""
    from fusiondiff.roundtrip.folder import FolderError, owned_folder

    owned_folder(slurm)
    try:
        slurm.mkdir(exist_ok=True)
    except OSError as exc:
        raise FolderError(f"cannot make {slurm}: {exc.strerror or exc}") from None
    owned_folder(slurm)
    folder = slurm / f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(6)}"
    try:
        os.mkdir(folder, 0o700)
        os.mkdir(folder / OUTCOMES, 0o700)
    except FileExistsError:
        raise FolderError(f"{folder} exists: a submission's folder is made fresh by its run; remove it") from None
    except OSError as exc:
        raise FolderError(f"cannot make {folder}: {exc.strerror or exc}") from None
    return folder


def _kept(task: SlurmTask) -> set[int]:
    """The fusions of ``task`` whose replay landed in DIR/replays, tied to this plan."""
    from fusiondiff.roundtrip.folder import trusted_replay

    return {
        d.index
        for d in task.plan.fusions
        if trusted_replay(task.plan.replays_dir / f"{d.stem}.json", task.plan.ties.get(d.index))
    }


def _queued(array: str) -> dict[str, str] | None:
    """The array's tasks still in Slurm's queue (``123_4`` -> state); None when squeue fails."""
    try:
        done = subprocess.run(
            ["squeue", "-h", "-r", "-j", array, "-o", "%i %T"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        # a job Slurm no longer knows is "Invalid job id": nothing of it is queued
        return {} if "Invalid job id" in done.stderr else None
    queued = {}
    for line in done.stdout.splitlines():
        job_id, _, state = line.strip().partition(" ")
        if job_id:
            queued[job_id] = state
    return queued


def _stderr_reason(job: Any) -> str:
    """The last line of the job's stderr that says why: srun's closing line (``task 0: Exited with
    exit code 1``) and the task's own progress lines only when nothing else is there (a Python
    exception's last line, a crash's message, slurmstepd's ``CANCELLED ... DUE TO TIME LIMIT``)."""
    from fusiondiff.io.files import read_bounded

    try:  # a regular file only (a FIFO there would never end), its tail only
        text = read_bounded(Path(job.paths.stderr), STDERR_TAIL_BYTES, what="job stderr", tail=True).decode(
            errors="replace"
        )
    except OSError:
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not set(line.strip()) <= {"-"}]
    telling = [line for line in lines if not line.startswith(("srun: ", "fusiondiff roundtrip: "))]
    return (telling or lines or [""])[-1]


def _refusal(text: str) -> str:
    """The line said when submitting failed: sbatch's words, never submitit's advice to its callers."""
    answer = re.search(r'Could not make sense of sbatch output "(.*)"', text, re.DOTALL)
    if answer is None:
        return f"Slurm refused the job array: {_last_line(text)}"
    said = _last_line(answer.group(1)) or "nothing"
    return f"sbatch answered without a job id ({said[:200]!r}), so the array cannot be followed: check `squeue --me` and cancel it if it was queued"


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip() and not set(line.strip()) <= {"-"}]
    return lines[-1] if lines else ""
