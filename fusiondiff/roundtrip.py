"""``fusiondiff roundtrip``: replay every distinct fusion of a live capture from its faithful repro,
and say which ones do not run at their live speed.

A training step holds hundreds of fusion records, many of them the same fusion (a model's repeated
layers). The round trip:

1. picks each distinct fusion once: same definition graph (:attr:`FusionRecord.structure_hash`),
   same input signature (:attr:`FusionRecord.input_signature`) and same enable/disable options
   (the repro keeps the options, so two records that differ only there are two replays);
2. writes its faithful repro (:func:`fusiondiff.replay.repro.render_repro`) to ``DIR/scripts/``;
3. replays them in fresh processes (:func:`fusiondiff.replay.runner.replay_scripts`), one worker
   per visible GPU fed from a queue, each worker's processes seeing only its GPU
   (``CUDA_VISIBLE_DEVICES``); a fresh process per fusion by default, or ``batch`` scripts per
   process, which is faster and less isolated (a fusion can then inherit another's compiled
   kernels or a lost CUDA context: scripts a batch did not replay are retried alone);
4. keeps each fusion's replay in ``DIR/replays/<script>.json`` as soon as it is done, so a rerun
   (or a run stopped by Ctrl-C) resumes and skips what is there and valid;
5. merges them into ``DIR/replay.json``, diffs the distinct live fusions against it into
   ``DIR/diff.json`` (the exported diff record) and builds the session summary: every live fusion
   against the replay of its distinct fusion, ranked by the time nothing recorded explains, and the
   step's totals.

A torchrun session leaves one live capture per rank (``live.rank0.json``, ``live.rank1.json``).
Given several (or a folder of them), the round trip takes every rank's fusions together: each
rank's fusions are first described on the reference rank's device (rank 1's ``cuda:1`` is where
rank 1 runs, not a property), so a fusion that every rank ran alike is one distinct fusion,
replayed once, while one that a rank ran differently (an input at another offset) is its own.
Each live record keeps its rank, and the summary has a row per rank.

The replay itself is a parameter (``replay``), so everything but the GPU work is tested with
recorded replays.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import queue
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fusiondiff.errors import CaptureFormatError, FusionDiffError, ReplayError
from fusiondiff.model import Capture, FusionRecord
from fusiondiff.options import RecordingOptions
from fusiondiff.progress import Progress, silent

ReplayFunction = Callable[[Sequence[str], Path, "str | None"], None]
"""``replay(scripts, output, device)``: replay ``scripts`` in one fresh process that sees only GPU
``device`` (``None``: whatever is visible) and write one capture to ``output``. Raises
:class:`ReplayError` on failure, after writing what was recorded, as
:func:`fusiondiff.replay.runner.replay_scripts` does."""

_TOKEN_ENV = "FUSIONDIFF_ROUNDTRIP_RUN"
"""Set in every replay process of one round trip, so Ctrl-C can stop exactly those."""


@dataclass(frozen=True)
class DistinctFusion:
    """One fusion to replay: the first live record of its kind, and every record of that kind."""

    index: int
    """Position in the live capture (``#N`` of ``fusiondiff show``) of the record replayed."""
    members: tuple[int, ...]
    """Positions of every live record with the same structure, inputs and options (with ``index``)."""
    stem: str
    """File stem of its repro script and replay capture (``0007_forward_nvFusion7``)."""


@dataclass(frozen=True)
class FusionRow:
    """One live fusion against the replay of its distinct fusion, for the session summary."""

    index: int
    name: str
    trace: str | None
    call_count: int
    replayed_as: int
    """Position of the live record whose repro was replayed (``index`` itself, or the first of its kind)."""
    live_median_ns: float
    replay_median_ns: float
    """NaN when there is no replay (failed, not written, not run)."""
    verdict: str
    """The diff's verdict of the distinct fusion's pair (``SAME``, ``FASTER``, ``SLOWER``,
    ``AMBIGUOUS``), ``FAILED`` (the replay crashed) or ``NOT REPLAYED``."""
    unexplained_ns: float
    """The part of ``|replay - live|`` (per call) that no cause or setup finding explains; 0 for SAME."""
    note: str = ""
    rank: int | None = None
    """The rank that recorded it, in a round trip of several ranks' captures."""
    rank_index: int | None = None
    """Its position in its rank's own capture (``#N`` of ``fusiondiff show live.rank1.json``)."""

    @property
    def gap_ns(self) -> float:
        return self.replay_median_ns - self.live_median_ns


@dataclass(frozen=True)
class RoundTripResult:
    """What a round trip did and found."""

    live: str
    directory: Path
    isolation: str
    """How the replays were isolated, in words (``a fresh process per fusion``)."""
    devices: tuple[str | None, ...]
    distinct: tuple[DistinctFusion, ...]
    replayed_now: int
    """Distinct fusions replayed by this run."""
    resumed: int
    """Distinct fusions whose replay was already in ``DIR/replays`` (skipped)."""
    not_replayed: dict[int, str]
    """Distinct fusion index -> why it has no replay."""
    rows: tuple[FusionRow, ...]
    """Every live fusion, ranked by unexplained time, then by gap."""
    replay_path: Path | None
    diff_path: Path | None
    exit_code: int
    """The diff's exit code (0 all SAME and nothing explains time, 1 otherwise), 2 without a diff."""
    interrupted: bool = False
    sources: tuple[LiveSource, ...] = ()
    """The live captures taken: one, or one per rank."""

    @property
    def rank_rows(self) -> tuple[RankRow, ...]:
        """One summary row per rank (empty for a single capture without a rank)."""
        if len(self.sources) < 2:
            return ()
        rep_rank = {r.index: r.rank for r in self.rows}
        rows = []
        for source in self.sources:
            mine = [r for r in self.rows if r.rank == source.rank]
            verdicts: dict[str, int] = {}
            for r in mine:
                verdicts[r.verdict] = verdicts.get(r.verdict, 0) + 1
            both = [r for r in mine if not math.isnan(r.live_median_ns) and not math.isnan(r.replay_median_ns)]
            rows.append(
                RankRow(
                    rank=source.rank,
                    path=str(source.path),
                    records=len(mine),
                    replayed_here=sum(1 for r in mine if r.replayed_as == r.index),
                    replayed_from_other_rank=sum(1 for r in mine if rep_rank.get(r.replayed_as) != source.rank),
                    live_total_ns=sum(r.live_median_ns * r.call_count for r in both),
                    replay_total_ns=sum(r.replay_median_ns * r.call_count for r in both),
                    unexplained_ns=sum(r.unexplained_ns * r.call_count for r in mine),
                    verdicts=tuple(sorted(verdicts.items())),
                )
            )
        return tuple(rows)

    @property
    def live_total_ns(self) -> float:
        """Sum over every live record of its median times its calls: the step's fusion time."""
        return sum(r.live_median_ns * r.call_count for r in self.rows if not math.isnan(r.live_median_ns))

    @property
    def compared_totals_ns(self) -> tuple[float, float, int]:
        """(live, replayed, records) over the records that have both numbers, each times its calls."""
        rows = [r for r in self.rows if not math.isnan(r.live_median_ns) and not math.isnan(r.replay_median_ns)]
        return (
            sum(r.live_median_ns * r.call_count for r in rows),
            sum(r.replay_median_ns * r.call_count for r in rows),
            len(rows),
        )


@dataclass(frozen=True)
class LiveSource:
    """One live capture of the round trip: a single session's, or one rank's."""

    rank: int | None
    """From the capture's environment, else from its name (``live.rank1.json``); None for a plain capture."""
    path: Path
    capture: Capture
    first: int
    """Position of its first fusion among every source's fusions taken together."""


@dataclass(frozen=True)
class RankRow:
    """One rank's part of a round trip of several ranks' captures."""

    rank: int | None
    path: str
    records: int
    replayed_here: int
    """Its records whose own repro was replayed (the first of their kind across ranks)."""
    replayed_from_other_rank: int
    """Its records compared with the replay of another rank's record of the same fusion."""
    live_total_ns: float
    """Median x calls over its records that have both a live and a replayed time."""
    replay_total_ns: float
    unexplained_ns: float
    """Per step: unexplained time per call x calls, summed."""
    verdicts: tuple[tuple[str, int], ...]


# --------------------------------------------------------------------------------------------
# Which captures, which fusions, which GPUs


def load_live_sources(items: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[LiveSource]:
    """The live captures named: one file, or the per-rank files of one torchrun session (files, or
    a folder of ``NAME.rank<N>.json``), in rank order. Raises :class:`FusionDiffError` for a capture
    that is not live or holds no fusions, and for a rank given twice."""
    from fusiondiff.diff.ranks import rank_capture_paths
    from fusiondiff.distributed import rank_of_path
    from fusiondiff.store import load_capture

    named = [items] if isinstance(items, (str, os.PathLike)) else list(items)
    paths = rank_capture_paths(named)
    loaded = []
    for path in paths:
        capture = load_capture(path)
        if capture.kind != "live":
            raise FusionDiffError(f"{path} is a {capture.kind} capture: the round trip starts from a live one")
        if not capture.fusions:
            raise FusionDiffError(f"{path} holds no fusions: nothing to replay")
        rank = capture.environment.rank if capture.environment.rank is not None else rank_of_path(path)
        loaded.append((rank, path, capture))
    if len(loaded) > 1:
        if any(rank is None for rank, _, _ in loaded):
            nameless = next(p for r, p, _ in loaded if r is None)
            raise FusionDiffError(
                f"{nameless}: no rank recorded and none in its name (NAME.rank<N>.json); several captures "
                "are taken as the ranks of one torchrun session"
            )
        ranks = [rank for rank, _, _ in loaded if rank is not None]
        twice = sorted({r for r in ranks if ranks.count(r) > 1})
        if twice:
            raise FusionDiffError(f"rank {twice[0]} is given twice: name each rank's capture once")
        loaded.sort(key=lambda item: item[0] if item[0] is not None else -1)
    sources, first = [], 0
    for rank, path, capture in loaded:
        sources.append(LiveSource(rank=rank, path=Path(path), capture=capture, first=first))
        first += len(capture.fusions)
    return sources


def combine_ranks(sources: Sequence[LiveSource]) -> Capture:
    """Every source's fusions in one capture, in rank order: the first source's environment, and
    each rank's fusions on its own device described as on the first rank's
    (:func:`fusiondiff.diff.ranks.on_reference_device`), so the same fusion on two ranks is one."""
    from fusiondiff.diff.ranks import on_reference_device, own_device

    if len(sources) == 1:
        return sources[0].capture
    reference = own_device(sources[0].capture)
    fusions = tuple(
        f for s in sources for f in on_reference_device(s.capture, own_device(s.capture), reference).fusions
    )
    warnings = tuple(dict.fromkeys(w for s in sources for w in s.capture.warnings))
    label = " + ".join(s.path.name for s in sources)
    return dataclasses.replace(sources[0].capture, fusions=fusions, warnings=warnings, source=label)


def _source_of(sources: Sequence[LiveSource], index: int) -> LiveSource:
    return next(s for s in reversed(sources) if s.first <= index)


def distinct_fusions(capture: Capture, ranks: Sequence[int | None] | None = None) -> list[DistinctFusion]:
    """Each distinct fusion of ``capture`` once, first occurrence first (see the module docstring);
    ``ranks`` gives each fusion's rank in a capture of several ranks (:func:`combine_ranks`)."""
    groups: dict[Any, list[int]] = {}
    for i, f in enumerate(capture.fusions):
        key = (f.structure_hash, f.input_signature, f.enable_options, f.disable_options)
        groups.setdefault(key, []).append(i)
    return [
        DistinctFusion(
            index=members[0],
            members=tuple(members),
            stem=_stem(members[0], capture.fusions[members[0]], None if ranks is None else ranks[members[0]]),
        )
        for members in groups.values()
    ]


def _stem(index: int, f: FusionRecord, rank: int | None = None) -> str:
    """``<position>_<trace>_<name>`` (``<position>_rank<N>_<trace>_<name>`` for one of several
    ranks): unique by its position, sorted like the capture, and a file name whatever the
    capture's names hold."""
    where = "" if rank is None else f"rank{rank}_"
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{where}{f.trace or 'script'}_{f.name}")[:60]
    return f"{index:04d}_{name}"


def visible_devices() -> list[str | None]:
    """The GPUs a round trip may use: ``CUDA_VISIBLE_DEVICES`` when it is set, else torch's count
    (imported here only); ``[None]`` (one worker, the default device) when neither says."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        devices = [d.strip() for d in listed.split(",") if d.strip()]
        # nvidia's rule: the list stops at the first invalid entry; -1 hides every GPU
        valid = []
        for d in devices:
            if d.startswith("-"):
                break
            valid.append(d)
        return list(valid) or [None]
    try:
        import torch

        count = torch.cuda.device_count()
    except Exception:  # noqa: BLE001 - no torch, no driver: one worker on the default device
        count = 0
    return [str(i) for i in range(count)] or [None]


def choose_devices(indices: Sequence[int], visible: Sequence[str | None]) -> list[str | None]:
    """The GPUs ``--device`` names, as indices among the visible ones (``--device 1`` with
    ``CUDA_VISIBLE_DEVICES=2,3`` is GPU 3). Raises :class:`FusionDiffError` for one not visible."""
    usable = [d for d in visible if d is not None]
    chosen: list[str | None] = []
    for index in indices:
        if not 0 <= index < len(usable):
            have = "no GPU is visible" if not usable else f"the visible GPUs are 0-{len(usable) - 1}"
            raise FusionDiffError(f"--device {index}: {have}")
        if usable[index] not in chosen:
            chosen.append(usable[index])
    return chosen


def batches(items: Sequence[DistinctFusion], size: int) -> list[list[DistinctFusion]]:
    """``items`` in order, ``size`` at a time."""
    if size < 1:
        raise FusionDiffError("--batch needs a number of scripts per process, 1 or more")
    return [list(items[k : k + size]) for k in range(0, len(items), size)]


def isolation_words(batch: int) -> str:
    return "a fresh process per fusion" if batch == 1 else f"a fresh process per batch of {batch} fusions"


# --------------------------------------------------------------------------------------------
# The run


def replay_in_child(
    options: RecordingOptions | None = None, timeout_s: float = 900.0, token: str | None = None
) -> ReplayFunction:
    """The real replay: :func:`fusiondiff.replay.runner.replay_scripts` in a fresh child process
    that sees only ``device``."""

    def replay(scripts: Sequence[str], output: Path, device: str | None) -> None:
        from fusiondiff.replay.runner import replay_scripts

        env = {}
        if device is not None:
            env["CUDA_VISIBLE_DEVICES"] = device
        if token is not None:
            env[_TOKEN_ENV] = token
        replay_scripts(list(scripts), output=str(output), options=options, timeout_s=timeout_s, child_env=env)

    return replay


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
) -> RoundTripResult:
    """Round trip of every distinct fusion of the live capture ``live`` (or of the per-rank captures
    of one torchrun session: several files, or a folder of ``NAME.rank<N>.json``) into
    ``directory``; see the module docstring. ``devices`` defaults to :func:`visible_devices`,
    ``replay`` to :func:`replay_in_child`. On Ctrl-C, the replays running are stopped, what finished
    is kept, the merged capture and diff are written of it, and the result says ``interrupted``."""
    if batch < 1:
        raise FusionDiffError("--batch needs a number of scripts per process, 1 or more")
    directory = Path(directory)
    progress = progress or silent
    sources = load_live_sources(live)
    capture = combine_ranks(sources)
    several = len(sources) > 1
    ranks = [_source_of(sources, i).rank for i in range(len(capture.fusions))] if several else None
    devices = tuple(devices) if devices is not None else tuple(visible_devices())
    token = f"{os.getpid()}-{time.time_ns()}"
    replay = replay or replay_in_child(options, timeout_s, token)
    isolation = isolation_words(batch)
    distinct = distinct_fusions(capture, ranks)
    scripts_dir, replays_dir, logs_dir = directory / "scripts", directory / "replays", directory / "logs"

    not_replayed: dict[int, str] = {}
    scripts = _write_scripts(capture, sources, distinct, scripts_dir, not_replayed)
    pending = [d for d in distinct if d.index not in not_replayed and not _valid_replay(replays_dir / f"{d.stem}.json")]
    resumed = sum(1 for d in distinct if d.index not in not_replayed) - len(pending)
    across = f" across {len(sources)} ranks" if several else ""
    progress(
        f"fusiondiff roundtrip: {len(capture.fusions)} live fusion record(s), {len(distinct)} distinct{across}; "
        f"{resumed} already replayed, {len(pending)} to replay on {len(devices)} worker(s) "
        f"({_device_words(devices)}), {isolation}"
    )

    work = _Work(pending, batch, devices, replay, scripts, replays_dir, logs_dir, progress, clock)
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
    return _finish(
        capture, sources, directory, distinct, isolation, devices, work.replayed, resumed, not_replayed, interrupted
    )


def _device_words(devices: Sequence[str | None]) -> str:
    if devices == (None,) or list(devices) == [None]:
        return "the default device"
    return "GPU " + ", ".join(str(d) for d in devices)


def _write_scripts(
    capture: Capture,
    sources: Sequence[LiveSource],
    distinct: Sequence[DistinctFusion],
    scripts_dir: Path,
    not_replayed: dict[int, str],
) -> dict[int, Path]:
    """Each distinct fusion's faithful repro, ``DIR/scripts/<stem>.py`` (rewritten every run, so
    the scripts are always this fusiondiff's); its saved tensors are those of the rank that
    recorded it."""
    from fusiondiff.replay.repro import render_repro
    from fusiondiff.store import write_text

    tensors_of = {s.path: _saved_tensors(s.capture, s.path) for s in sources}
    written = {}
    for d in distinct:
        source = _source_of(sources, d.index)
        tensors = tensors_of[source.path]
        path = scripts_dir / f"{d.stem}.py"
        tensors_file = os.path.relpath(tensors.resolve(), scripts_dir.resolve()) if tensors is not None else None
        try:
            text = render_repro(
                capture.fusions[d.index], source.capture.environment, tensors_file, capture_name=source.path.name
            )
        except ReplayError as exc:
            not_replayed[d.index] = f"no repro could be written: {exc}"
            continue
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            write_text(path, text)
        written[d.index] = path
    return written


def _saved_tensors(capture: Capture, live: Path) -> Path | None:
    from fusiondiff.store import tensors_path_for

    name = capture.tensors_file
    if name and Path(name).name == name and name not in (".", ".."):
        if (live.parent / name).exists():
            return live.parent / name
    default = tensors_path_for(live)
    return default if default.exists() else None


def _valid_replay(path: Path) -> bool:
    """A replay capture kept by an earlier run: there, readable, and holding a fusion."""
    from fusiondiff.store import load_capture

    if not path.is_file():
        return False
    try:
        return bool(load_capture(path).fusions)
    except FusionDiffError:
        return False


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
        replays_dir: Path,
        logs_dir: Path,
        progress: Progress,
        clock: Callable[[], float],
    ) -> None:
        self.queue: queue.Queue[list[DistinctFusion]] = queue.Queue()
        for group in batches(pending, batch):
            self.queue.put(group)
        self.total = len(pending)
        self.devices = list(devices)
        self.replay = replay
        self.scripts = scripts
        self.replays_dir = replays_dir
        self.logs_dir = logs_dir
        self.progress = progress
        self.clock = clock
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.replayed = 0
        self.failures: dict[int, str] = {}
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
        try:
            while not self.stopping.is_set():
                try:
                    group = self.queue.get_nowait()
                except queue.Empty:
                    return
                with self.lock:
                    self.assignments.append((device, tuple(d.index for d in group)))
                retry = self._run_batch(group, device)
                for d in retry:  # a batch's left-overs go again, alone
                    self.queue.put([d])
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            self.errors.append(exc)

    def _run_batch(self, group: list[DistinctFusion], device: str | None) -> list[DistinctFusion]:
        """Replay one batch, keep each fusion's replay; returns the fusions to retry alone."""
        output = self.logs_dir / f"{group[0].stem}{'' if len(group) == 1 else f'+{len(group) - 1}'}.json"
        output.parent.mkdir(parents=True, exist_ok=True)
        message = ""
        try:
            self.replay([str(self.scripts[d.index]) for d in group], output, device)
        except ReplayError as exc:
            message = str(exc)
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
            script = self.scripts[by_stem[stem].index]
            one = dataclasses.replace(replayed, fusions=tuple(records), source=str(script), tensors_file=None)
            save_capture(one, self.replays_dir / f"{stem}.json")
            kept.add(by_stem[stem].index)
        return kept

    def _report(self, done: int) -> None:
        elapsed = self.clock() - self.started
        left = max(self.total - done, 0)
        eta = "" if done == 0 or left == 0 else f", about {_duration(elapsed / done * left)} left"
        failed = f" ({len(self.failures)} failed)" if self.failures else ""
        self.progress(f"fusiondiff roundtrip: {done}/{self.total} done{failed}, {_duration(elapsed)} elapsed{eta}")


def _moved_log(f: FusionRecord, output: Path, replays_dir: Path) -> Any:
    """A failure's log file, named from where the per-fusion capture now is."""
    if f.failure is None or not f.failure.log_file:
        return f.failure
    log = output.parent / f.failure.log_file
    return dataclasses.replace(f.failure, log_file=os.path.relpath(log, replays_dir))


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
    marker = f"{_TOKEN_ENV}={token}".encode()
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


# --------------------------------------------------------------------------------------------
# Merging, diffing, summarising


def merge_replays(paths: Sequence[Path], source: str) -> Capture | None:
    """One replay capture of the per-fusion replays at ``paths`` (the first one's environment and
    protocol; every warning kept once). ``None`` when there is none."""
    from fusiondiff.store import load_capture

    captures = [load_capture(p) for p in paths]
    if not captures:
        return None
    warnings = list(dict.fromkeys(w for c in captures for w in c.warnings))
    protocols = {c.protocol for c in captures}
    if len(protocols) > 1:
        warnings.append(f"the replays were taken under {len(protocols)} timing protocols (reruns with other options)")
    return dataclasses.replace(
        captures[0],
        fusions=tuple(f for c in captures for f in c.fusions),
        source=source,
        tensors_file=None,
        warnings=tuple(warnings),
    )


def _finish(
    capture: Capture,
    sources: Sequence[LiveSource],
    directory: Path,
    distinct: Sequence[DistinctFusion],
    isolation: str,
    devices: Sequence[str | None],
    replayed_now: int,
    resumed: int,
    not_replayed: dict[int, str],
    interrupted: bool,
) -> RoundTripResult:
    from fusiondiff.diff.ranks import on_reference_device, own_device
    from fusiondiff.store import check_not_input, save_capture, write_text

    lives = [s.path for s in sources]
    label = " + ".join(p.name for p in lives)
    several = len(sources) > 1
    replays_dir = directory / "replays"
    have = [d for d in distinct if d.index not in not_replayed and _valid_replay(replays_dir / f"{d.stem}.json")]
    for d in distinct:
        if d.index not in not_replayed and d not in have:
            not_replayed[d.index] = "not replayed (interrupted)" if interrupted else "no valid replay capture"
    merged = merge_replays(
        [replays_dir / f"{d.stem}.json" for d in have], f"roundtrip of {label}: {len(have)} script(s)"
    )
    replay_path = diff_path = None
    result = None
    subset = None
    rep_of_stem = {d.stem: d.index for d in have}
    if merged is not None:
        replay_path = directory / "replay.json"
        check_not_input(replay_path, lives)
        save_capture(merged, replay_path)
        # A holds the distinct live fusions that have a replay: the others are in the summary. Of
        # several ranks, each named with its rank (two ranks' nvFusion2 may both be there).
        subset = dataclasses.replace(
            capture,
            fusions=tuple(
                dataclasses.replace(capture.fusions[d.index], name=f"rank{_source_of(sources, d.index).rank}:{f.name}")
                if several
                else f
                for d in have
                for f in (capture.fusions[d.index],)
            ),
        )
        # the replay ran on the worker's GPU (cuda:0 of its CUDA_VISIBLE_DEVICES): the device the
        # live rank ran on is where it ran, not a property of the fusion
        compared = on_reference_device(merged, own_device(merged), own_device(subset))
        from fusiondiff.diff.core import describe_source, diff
        from fusiondiff.report.interface import DiffReport
        from fusiondiff.report.paths import display_paths
        from fusiondiff.report.record import dumps_diff_record

        result = diff(
            subset,
            compared,
            source_a=describe_source(label if several else lives[0], capture),
            source_b=describe_source(replay_path, merged),
        )
        diff_path = directory / "diff.json"
        check_not_input(diff_path, lives)
        path_a, path_b = display_paths([lives[0], replay_path])
        write_text(diff_path, dumps_diff_record(DiffReport(result, subset, compared, path_a, path_b)))
    rows = _rows(capture, distinct, have, result, merged, rep_of_stem, not_replayed, sources)
    return RoundTripResult(
        live=label if several else str(lives[0]),
        directory=directory,
        isolation=isolation,
        devices=tuple(devices),
        distinct=tuple(distinct),
        replayed_now=replayed_now,
        resumed=resumed,
        not_replayed=dict(not_replayed),
        rows=tuple(rows),
        replay_path=replay_path,
        diff_path=diff_path,
        exit_code=2 if result is None else max(result.exit_code(), 1 if not_replayed else 0),
        interrupted=interrupted,
        sources=tuple(sources),
    )


def _rows(
    capture: Capture,
    distinct: Sequence[DistinctFusion],
    have: Sequence[DistinctFusion],
    result: Any,
    merged: Capture | None,
    rep_of_stem: dict[str, int],
    not_replayed: dict[int, str],
    sources: Sequence[LiveSource] = (),
) -> list[FusionRow]:
    """Every live fusion against the replay of its distinct fusion (see :class:`FusionRow`)."""
    several = len(sources) > 1

    def where(index: int) -> tuple[int | None, int | None]:
        if not several:
            return None, None
        source = _source_of(sources, index)
        return source.rank, index - source.first

    def ref(index: int) -> str:
        rank, position = where(index)
        return f"#{index}" if rank is None else f"rank {rank} #{position}"

    # the pair of each replayed distinct fusion: A of the diff lists ``have`` in order
    pair_of: dict[int, Any] = {}
    explained: dict[str, float] = {}
    if result is not None:
        for f in result.findings:
            if f.role in ("cause", "setup") and f.fusions and f.explained_ns > 0:
                for label in f.fusions:
                    explained[label] = explained.get(label, 0.0) + f.explained_ns / len(f.fusions)
        for p in result.pairs:
            pair_of[have[p.index_a].index] = p
    crossed: dict[int, int] = {}  # live fusion -> the fusion whose replay the diff paired it with
    if merged is not None:
        for rep, p in pair_of.items():
            replayed_from = rep_of_stem.get(merged.fusions[p.index_b].name.partition(":")[0])
            if replayed_from is not None and replayed_from != rep:
                crossed[rep] = replayed_from
    rep_of = {m: d.index for d in distinct for m in d.members}
    rows = []
    for i, f in enumerate(capture.fusions):
        rep = rep_of[i]
        pair = pair_of.get(rep)
        live_ns = f.timing.median_ns
        note = "" if rep == i else f"replay of {ref(rep)}"
        if rep in crossed:
            note = _join(note, f"paired by the diff with the replay of {ref(crossed[rep])}")
        rank, position = where(i)

        # what every row of this record holds, whatever its replay became
        row = functools.partial(
            FusionRow, index=i, name=f.name, trace=f.trace, call_count=f.call_count, replayed_as=rep,
            live_median_ns=live_ns, rank=rank, rank_index=position,
        )  # fmt: skip
        if pair is None:
            why = not_replayed.get(rep, "its replay matched no live fusion")
            rows.append(
                row(replay_median_ns=math.nan, verdict="NOT REPLAYED", unexplained_ns=0.0, note=_join(note, why))
            )
            continue
        if pair.failed:
            assert merged is not None
            failure = merged.fusions[pair.index_b].failure
            why = f"replay failed: {failure.kind.replace('_', ' ')}: {failure.message}" if failure else "replay failed"
            rows.append(row(replay_median_ns=math.nan, verdict="FAILED", unexplained_ns=0.0, note=_join(note, why)))
            continue
        t = pair.timing
        replay_ns = t.median_b_ns
        gap = abs(t.median_b_ns - t.median_a_ns)
        unexplained_rep = (
            0.0 if t.verdict == "SAME" or math.isnan(gap) else max(gap - explained.get(pair.label, 0.0), 0.0)
        )
        if rep == i:
            unexplained = unexplained_rep
        else:  # the same fraction of this record's own gap to the shared replay
            own_gap = abs(replay_ns - live_ns)
            unexplained = 0.0 if not gap or math.isnan(own_gap) else own_gap * unexplained_rep / gap
        rows.append(row(replay_median_ns=replay_ns, verdict=t.verdict, unexplained_ns=unexplained, note=note))
    rows.sort(key=lambda r: (-r.unexplained_ns, -(abs(r.gap_ns) if not math.isnan(r.gap_ns) else -1.0), r.index))
    return rows


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


# --------------------------------------------------------------------------------------------
# The summary


def _us(ns: float) -> str:
    return "-" if math.isnan(ns) else f"{ns / 1000:.2f}"


def render_summary(result: RoundTripResult, top: int | None = None) -> str:
    """The session summary as text: what ran how, every fusion (or the ``top`` first) live vs
    replay ranked by unexplained time, and the step's totals (times in us)."""
    lines = [
        f"round trip of {result.live}: {len(result.rows)} live fusion record(s), {len(result.distinct)} distinct",
        f"  isolation: {result.isolation}; {len(result.devices)} worker(s) on {_device_words(result.devices)}",
        f"  replayed now {result.replayed_now}, kept from an earlier run {result.resumed}, "
        f"without a replay {len(result.not_replayed)}"
        + ("  (interrupted: rerun to resume)" if result.interrupted else ""),
    ]
    if result.replay_path:
        lines.append(f"  merged replay: {result.replay_path}   diff record: {result.diff_path}")
    header = f"  {'#':>5} {'fusion':<36} {'calls':>5} {'live us':>10} {'replay us':>10} {'gap us':>9} {'unexpl. us':>10}  verdict"
    lines += ["", "fusions, ranked by time nothing recorded explains (per call):", header]
    shown = result.rows if top is None else result.rows[:top]
    for r in shown:
        label = f"{r.name} [{r.trace}]" if r.trace else r.name
        gap = "-" if math.isnan(r.gap_ns) else f"{r.gap_ns / 1000:+.2f}"
        # of several ranks: r1#3 is fusion #3 of rank 1's own capture
        position = f"#{r.index}" if r.rank is None else f"r{r.rank}#{r.rank_index}"
        line = (
            f"  {position:>5} {label[:36]:<36} {r.call_count:>5} {_us(r.live_median_ns):>10} "
            f"{_us(r.replay_median_ns):>10} {gap:>9} {_us(r.unexplained_ns):>10}  {r.verdict}"
        )
        lines.append(line + (f"  ({r.note})" if r.note else ""))
    if len(shown) < len(result.rows):
        lines.append(f"  ... {len(result.rows) - len(shown)} more fusion(s) not shown (--top)")
    live_all = result.live_total_ns
    live_cmp, replay_cmp, count = result.compared_totals_ns
    lines += [
        "",
        "step totals (median x calls, summed over the fusion records):",
        f"  live, every record: {_us(live_all)} us",
        f"  records with a replay ({count}): live {_us(live_cmp)} us, replayed {_us(replay_cmp)} us"
        + (f" ({replay_cmp / live_cmp:.2f}x)" if live_cmp > 0 else ""),
    ]
    counts: dict[str, int] = {}
    for r in result.rows:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    lines.append("  verdicts: " + ", ".join(f"{v} {n}" for v, n in sorted(counts.items())))
    if result.rank_rows:
        lines += [
            "",
            "per rank (median x calls over its records with a replay; a fusion every rank ran alike is replayed once):",
            f"  {'rank':>4} {'records':>7} {'own':>4} {'shared':>6} {'live us':>10} {'replay us':>10} "
            f"{'unexpl. us':>10}  verdicts   file",
        ]
        for row in result.rank_rows:
            verdicts = ", ".join(f"{v} {n}" for v, n in row.verdicts)
            lines.append(
                f"  {row.rank if row.rank is not None else '-':>4} {row.records:>7} {row.replayed_here:>4} "
                f"{row.replayed_from_other_rank:>6} {_us(row.live_total_ns):>10} {_us(row.replay_total_ns):>10} "
                f"{_us(row.unexplained_ns):>10}  {verdicts}   {row.path}"
            )
        lines.append("  own: records replayed from their own repro; shared: compared with another rank's replay")
    from fusiondiff.escape import printable

    return "\n".join(printable(line) for line in lines) + "\n"
