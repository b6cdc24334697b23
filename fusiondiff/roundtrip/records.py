"""What a round trip produces: the distinct fusions it replays, a row per live fusion, a row per
rank, and the result that holds them."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

from fusiondiff.records.gates import Outcome, combined_exit_code, exit_code_of
from fusiondiff.records.model import Capture


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
class ReplayPlan:
    """What a round trip's replays are to do, wherever they run (this machine's workers, or one
    Slurm task's node): the distinct fusions to replay, in batches of ``batch`` scripts per process,
    each one's repro script and tie to the plan (the source its kept replay carries), and where the
    kept replays and the processes' logs go."""

    fusions: tuple[DistinctFusion, ...]
    batch: int
    scripts: dict[int, Path]
    ties: dict[int, str]
    replays_dir: Path
    logs_dir: Path

    def part(self, fusions: tuple[DistinctFusion, ...]) -> ReplayPlan:
        """The plan of ``fusions`` alone, with their scripts and ties only (a Slurm task's pickle
        stays small)."""
        own = [d.index for d in fusions]
        return replace(
            self, fusions=fusions, scripts={i: self.scripts[i] for i in own}, ties={i: self.ties[i] for i in own}
        )


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
    ``NOT MEASURED``), ``FAILED`` (the replay crashed) or ``NOT REPLAYED``."""
    unexplained_ns: float
    """The part of ``|replay - live|`` (per call) that no cause or setup finding explains; 0 for SAME."""
    note: str = ""
    rank: int | None = None
    """The rank that recorded it, in a round trip of several ranks' captures."""
    rank_index: int | None = None
    """Its position in its rank's own capture (``#N`` of ``fusiondiff show live.rank1.json``)."""
    live_host_ns: float = math.nan
    """Host time of one of the session's calls (Thunder's region call, else its ``fd.execute``), apart
    from kernel time; NaN where not recorded (files older than issue #27)."""
    replay_host_ns: float = math.nan
    """Host time of the replay's ``fd.execute`` per call; NaN where not recorded."""

    @property
    def gap_ns(self) -> float:
        return self.replay_median_ns - self.live_median_ns


@dataclass(frozen=True)
class ReplayProcess:
    """One replay process of a round trip: where it ran, how many scripts, how long it took."""

    device: str | None
    scripts: int
    seconds: float
    """Wall time the worker waited on it: from its turn to its exit (its CUDA context, the fusions'
    compiles and their timing). A process started ahead did its imports (and, prepared on the GPU,
    its context, compiles and profiler start) before its turn, so they are not counted; a worker's
    first process counts them."""
    ended_s: float | None = None
    """When it ended, seconds since the run's replays began (the worker's clock): successive ends
    on one GPU give each replay's share of the wall time."""
    log: str | None = None
    """Its log's name in ``DIR/logs`` (its phases are beside it, ``.phases.json``)."""


@dataclass(frozen=True)
class QuestionRow:
    """One question of the round trip's diff: whether it passes, its verdict line, its ledger line."""

    question: str
    passes: bool
    verdict: str
    ledger: str
    outcome: Outcome = "passes"
    """``passes``, ``fails`` or ``not measured`` (:mod:`fusiondiff.records.gates`)."""


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
    """The diff's exit code under the default gate (0 every fusion replayed at its live kernel
    speed, 1 otherwise, also where a replay failed or is missing, 3 where none fails but a
    fusion's kernel time was not measured), 2 without a diff."""
    interrupted: bool = False
    sources: tuple[LiveSource, ...] = ()
    """The live captures taken: one, or one per rank."""
    processes: tuple[ReplayProcess, ...] = ()
    """Every replay process this run started, in the order they ended."""
    started_ahead: bool = False
    """Each worker started its next replay processes while one ran (``--no-prestart`` turns it off)."""
    ahead: int = 0
    """How many processes each worker kept started ahead (0: each started in its turn)."""
    prepared_ahead: str = ""
    """How far a process started ahead went before its turn: ``imports``, ``context`` (context,
    profiler) or ``gpu`` (context, compile, profiler); empty when none was started ahead."""
    forked: bool = False
    """The processes started ahead were forked from one server that imported torch and nvFuser once."""
    questions: tuple[QuestionRow, ...] = ()
    """Each question's verdict and gate, from the diff (kernel, host, fidelity); empty without one."""

    def exit_code_for(self, gates: tuple[str, ...] = ()) -> int:
        """:attr:`exit_code` with the questions ``gates`` names gated too (``host``, ``fidelity``):
        1 where one fails, else 3 where one was not measured (:mod:`fusiondiff.records.gates`)."""
        if self.exit_code == 2:
            return 2
        gated = exit_code_of(row.outcome for row in self.questions if row.question in gates)
        return combined_exit_code([self.exit_code, gated])

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
