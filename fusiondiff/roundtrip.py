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

The replay itself is a parameter (``replay``), so everything but the GPU work is tested with
recorded replays.
"""

from __future__ import annotations

import dataclasses
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


# --------------------------------------------------------------------------------------------
# Which fusions, which GPUs


def distinct_fusions(capture: Capture) -> list[DistinctFusion]:
    """Each distinct fusion of ``capture`` once, first occurrence first (see the module docstring)."""
    groups: dict[Any, list[int]] = {}
    for i, f in enumerate(capture.fusions):
        key = (f.structure_hash, f.input_signature, f.enable_options, f.disable_options)
        groups.setdefault(key, []).append(i)
    return [
        DistinctFusion(index=members[0], members=tuple(members), stem=_stem(members[0], capture.fusions[members[0]]))
        for members in groups.values()
    ]


def _stem(index: int, f: FusionRecord) -> str:
    """``<position>_<trace>_<name>``: unique by its position, sorted like the capture, and a file
    name whatever the capture's names hold."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{f.trace or 'script'}_{f.name}")[:60]
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
    live: str | os.PathLike[str],
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
    """Round trip of every distinct fusion of the live capture ``live`` into ``directory``; see
    the module docstring. ``devices`` defaults to :func:`visible_devices`, ``replay`` to
    :func:`replay_in_child`. On Ctrl-C, the replays running are stopped, what finished is kept,
    the merged capture and diff are written of it, and the result says ``interrupted``."""
    from fusiondiff.store import load_capture

    if batch < 1:
        raise FusionDiffError("--batch needs a number of scripts per process, 1 or more")
    live = Path(live)
    directory = Path(directory)
    progress = progress or silent
    capture = load_capture(live)
    if capture.kind != "live":
        raise FusionDiffError(f"{live} is a {capture.kind} capture: the round trip starts from a live one")
    if not capture.fusions:
        raise FusionDiffError(f"{live} holds no fusions: nothing to replay")
    devices = tuple(devices) if devices is not None else tuple(visible_devices())
    token = f"{os.getpid()}-{time.time_ns()}"
    replay = replay or replay_in_child(options, timeout_s, token)
    isolation = isolation_words(batch)
    distinct = distinct_fusions(capture)
    scripts_dir, replays_dir, logs_dir = directory / "scripts", directory / "replays", directory / "logs"

    not_replayed: dict[int, str] = {}
    scripts = _write_scripts(capture, live, distinct, scripts_dir, not_replayed)
    pending = [d for d in distinct if d.index not in not_replayed and not _valid_replay(replays_dir / f"{d.stem}.json")]
    resumed = sum(1 for d in distinct if d.index not in not_replayed) - len(pending)
    progress(
        f"fusiondiff roundtrip: {len(capture.fusions)} live fusion record(s), {len(distinct)} distinct; "
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
        capture, live, directory, distinct, isolation, devices, work.replayed, resumed, not_replayed, interrupted
    )


def _device_words(devices: Sequence[str | None]) -> str:
    if devices == (None,) or list(devices) == [None]:
        return "the default device"
    return "GPU " + ", ".join(str(d) for d in devices)


def _write_scripts(
    capture: Capture, live: Path, distinct: Sequence[DistinctFusion], scripts_dir: Path, not_replayed: dict[int, str]
) -> dict[int, Path]:
    """Each distinct fusion's faithful repro, ``DIR/scripts/<stem>.py`` (rewritten every run, so
    the scripts are always this fusiondiff's)."""
    from fusiondiff.replay.repro import render_repro
    from fusiondiff.store import write_text

    tensors = _saved_tensors(capture, live)
    written = {}
    for d in distinct:
        path = scripts_dir / f"{d.stem}.py"
        tensors_file = os.path.relpath(tensors.resolve(), scripts_dir.resolve()) if tensors is not None else None
        try:
            text = render_repro(capture.fusions[d.index], capture.environment, tensors_file, capture_name=live.name)
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
    live: Path,
    directory: Path,
    distinct: Sequence[DistinctFusion],
    isolation: str,
    devices: Sequence[str | None],
    replayed_now: int,
    resumed: int,
    not_replayed: dict[int, str],
    interrupted: bool,
) -> RoundTripResult:
    from fusiondiff.store import check_not_input, save_capture, write_text

    replays_dir = directory / "replays"
    have = [d for d in distinct if d.index not in not_replayed and _valid_replay(replays_dir / f"{d.stem}.json")]
    for d in distinct:
        if d.index not in not_replayed and d not in have:
            not_replayed[d.index] = "not replayed (interrupted)" if interrupted else "no valid replay capture"
    merged = merge_replays(
        [replays_dir / f"{d.stem}.json" for d in have], f"roundtrip of {live.name}: {len(have)} script(s)"
    )
    replay_path = diff_path = None
    result = None
    subset = None
    rep_of_stem = {d.stem: d.index for d in have}
    if merged is not None:
        replay_path = directory / "replay.json"
        check_not_input(replay_path, [live])
        save_capture(merged, replay_path)
        # A holds the distinct live fusions that have a replay: the others are in the summary
        subset = dataclasses.replace(capture, fusions=tuple(capture.fusions[d.index] for d in have))
        from fusiondiff.diff.core import describe_source, diff
        from fusiondiff.report.interface import DiffReport
        from fusiondiff.report.paths import display_paths
        from fusiondiff.report.record import dumps_diff_record

        result = diff(
            subset, merged, source_a=describe_source(live, capture), source_b=describe_source(replay_path, merged)
        )
        diff_path = directory / "diff.json"
        check_not_input(diff_path, [live])
        path_a, path_b = display_paths([live, replay_path])
        write_text(diff_path, dumps_diff_record(DiffReport(result, subset, merged, path_a, path_b)))
    rows = _rows(capture, distinct, have, result, merged, rep_of_stem, not_replayed)
    return RoundTripResult(
        live=str(live),
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
    )


def _rows(
    capture: Capture,
    distinct: Sequence[DistinctFusion],
    have: Sequence[DistinctFusion],
    result: Any,
    merged: Capture | None,
    rep_of_stem: dict[str, int],
    not_replayed: dict[int, str],
) -> list[FusionRow]:
    """Every live fusion against the replay of its distinct fusion (see :class:`FusionRow`)."""
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
        note = "" if rep == i else f"replay of #{rep}"
        if rep in crossed:
            note = _join(note, f"paired by the diff with the replay of #{crossed[rep]}")
        if pair is None:
            why = not_replayed.get(rep, "its replay matched no live fusion")
            rows.append(
                FusionRow(
                    i, f.name, f.trace, f.call_count, rep, live_ns, math.nan, "NOT REPLAYED", 0.0, _join(note, why)
                )
            )
            continue
        if pair.failed:
            assert merged is not None
            failure = merged.fusions[pair.index_b].failure
            why = f"replay failed: {failure.kind.replace('_', ' ')}: {failure.message}" if failure else "replay failed"
            rows.append(
                FusionRow(i, f.name, f.trace, f.call_count, rep, live_ns, math.nan, "FAILED", 0.0, _join(note, why))
            )
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
        rows.append(FusionRow(i, f.name, f.trace, f.call_count, rep, live_ns, replay_ns, t.verdict, unexplained, note))
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
        line = (
            f"  {'#' + str(r.index):>5} {label[:36]:<36} {r.call_count:>5} {_us(r.live_median_ns):>10} "
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
    from fusiondiff.escape import printable

    return "\n".join(printable(line) for line in lines) + "\n"
