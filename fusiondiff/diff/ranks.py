"""The per-rank captures of one torchrun session, compared: the same fusion across ranks.

The lowest rank (rank 0) is side A of an ordinary :func:`~fusiondiff.diff.diff`, each other rank
side B of its own. A rank whose fusions take longer than rank 0's is a straggler; stragglers are
ranked by their fusions' total time gap per step, each with the top finding of its diff.

Every rank runs on its own GPU (``cuda:1`` for rank 1), so the device index of its fusions and
inputs always differs from rank 0's: that is where the rank runs, not a difference. The differ
itself describes a rank's fusions on its own device as if on the reference rank's device
(:mod:`fusiondiff.diff.devices`), as it does for any two captures; a fusion that ran on another
device than its rank's own keeps its index, and the diff reports it. Two ranks recorded on one GPU
of one host are reported as sharing it.

Each rank's collectives (NCCL's kernels, recorded apart from its fusions) are set side by side, and
ranks whose time in them differs by more than :data:`COMMUNICATION_SPREAD` are named
(:class:`CommunicationImbalance`): they are never part of a fusion's diff.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from fusiondiff.diff.core import diff
from fusiondiff.diff.devices import own_device
from fusiondiff.diff.records import DiffResult
from fusiondiff.records.errors import DiffError
from fusiondiff.records.gates import combined_exit_code
from fusiondiff.records.model import Capture, CommunicationKernel


@dataclass(frozen=True)
class RankCapture:
    """One rank's capture and where it was read from."""

    rank: int
    """From the capture's environment, else from its file name (``live.rank1.json``)."""
    path: str
    capture: Capture


@dataclass(frozen=True)
class RankComparison:
    """One rank (B) against the reference rank (A)."""

    rank: int
    path: str
    result: DiffResult
    gap_ns: float
    """Per step: for the matched fusions whose speed differs (FASTER or SLOWER), B's median minus
    A's, times B's call count, summed. Positive: this rank spends longer in its fusions."""
    placement: tuple[str, ...] = ()
    """Notes on where this rank ran (a GPU shared with another rank of its host)."""

    @property
    def is_straggler(self) -> bool:
        return self.gap_ns > 0


COMMUNICATION_SPREAD = 0.10
"""Ranks whose communication totals differ by more than this fraction of the largest are reported."""


@dataclass(frozen=True)
class RankCommunication:
    """One rank's collectives in its capture block, apart from its fusions."""

    rank: int
    kernels: tuple[CommunicationKernel, ...]
    """As the capture recorded them (empty: none recorded, see the capture's warnings)."""
    total_ns: float
    """Every communication kernel's calls, summed: time in collectives, waiting included."""
    fusion_time_ns: float
    """The rank's fusion time in the block (:attr:`fusiondiff.records.model.Capture.fusion_time_ns`)."""


@dataclass(frozen=True)
class CommunicationImbalance:
    """The ranks' time in collectives differs by more than :data:`COMMUNICATION_SPREAD`.

    A collective ends on every rank only when the last rank reaches it, so a rank's time in it is
    largely time spent waiting for the others: the rank that waits longest is usually not the one
    holding the session back, and the one that waits least (``least_rank``) is the likelier straggler."""

    most_rank: int
    most_ns: float
    least_rank: int
    least_ns: float

    @property
    def spread(self) -> float:
        """``(most - least) / most``."""
        return (self.most_ns - self.least_ns) / self.most_ns if self.most_ns > 0 else 0.0


@dataclass(frozen=True)
class RanksResult:
    """Every rank compared with the reference rank."""

    reference_rank: int
    reference_path: str
    comparisons: tuple[RankComparison, ...]
    """In rank order."""
    warnings: tuple[str, ...] = ()
    communication: tuple[RankCommunication, ...] = ()
    """Every rank's collectives, the reference rank's included, in rank order."""

    @property
    def communication_imbalance(self) -> CommunicationImbalance | None:
        """The ranks that spent most and least time in collectives, where they differ by more than
        :data:`COMMUNICATION_SPREAD` (only ranks that recorded communication kernels count)."""
        recorded = [c for c in self.communication if c.kernels]
        if len(recorded) < 2:
            return None
        most = max(recorded, key=lambda c: (c.total_ns, -c.rank))
        least = min(recorded, key=lambda c: (c.total_ns, c.rank))
        found = CommunicationImbalance(most.rank, most.total_ns, least.rank, least.total_ns)
        return found if found.spread > COMMUNICATION_SPREAD else None

    @property
    def stragglers(self) -> tuple[RankComparison, ...]:
        """Ranks slower than the reference, the largest total gap first."""
        return tuple(sorted((c for c in self.comparisons if c.is_straggler), key=lambda c: (-c.gap_ns, c.rank)))

    def exit_code(self, strict: bool = False, gates: tuple[str, ...] = ()) -> int:
        """As ``fusiondiff diff``, over every rank's diff under the same gates: 1 when one fails,
        else 3 when one could not be judged, else 0 (:func:`fusiondiff.records.gates.combined_exit_code`)."""
        return combined_exit_code(c.result.exit_code(strict, gates) for c in self.comparisons)


def _step_gap_ns(result: DiffResult, b: Capture) -> float:
    total = 0.0
    for pair in result.pairs:
        gap = pair.timing.gap_ns
        if pair.timing.verdict in ("FASTER", "SLOWER") and not math.isnan(gap):
            total += gap * b.fusions[pair.index_b].call_count
    return total


def _placement(ranks: Sequence[RankCapture]) -> dict[int, list[str]]:
    """Ranks of one host on one GPU: they share its SMs and memory bandwidth."""
    notes: dict[int, list[str]] = {}
    seen: dict[tuple[str | None, int | None], int] = {}
    for rc in ranks:
        if rc.capture.environment.rank is None:
            continue  # not recorded under torchrun (a copied single-process capture): placement unknown
        device = own_device(rc.capture)
        where = (rc.capture.environment.hostname, device)
        if device is not None and where in seen:
            host = f" of {where[0]}" if where[0] else ""
            notes.setdefault(rc.rank, []).append(f"shares cuda:{device}{host} with rank {seen[where]}")
        seen.setdefault(where, rc.rank)
    return notes


def diff_ranks(ranks: Sequence[RankCapture]) -> RanksResult:
    """Compare every rank with the lowest (rank 0): one :func:`diff` per rank."""
    if len(ranks) < 2:
        raise DiffError("`fusiondiff ranks` needs the captures of two or more ranks")
    reference, *others = sorted(ranks, key=lambda r: r.rank)
    warnings = []
    if reference.rank != 0:
        warnings.append(f"no capture of rank 0: rank {reference.rank} is the reference")
    worlds = sorted({w for r in ranks if (w := r.capture.environment.world_size) is not None})
    if len(worlds) > 1:
        warnings.append(f"the captures record different world sizes ({worlds}): are they of one session?")
    elif worlds and len(ranks) < worlds[0]:
        warnings.append(f"{len(ranks)} of {worlds[0]} ranks given: the others are not compared")
    placement = _placement(ranks)
    comparisons = []
    for rc in others:
        result = diff(
            reference.capture,
            rc.capture,
            label_a=f"rank {reference.rank}",
            label_b=f"rank {rc.rank}",
            source_a=reference.path,
            source_b=rc.path,
        )
        comparisons.append(
            RankComparison(
                rank=rc.rank,
                path=rc.path,
                result=result,
                gap_ns=_step_gap_ns(result, rc.capture),
                placement=tuple(placement.get(rc.rank, ())),
            )
        )
    return RanksResult(
        reference_rank=reference.rank,
        reference_path=reference.path,
        comparisons=tuple(comparisons),
        warnings=tuple(warnings),
        communication=tuple(
            RankCommunication(
                rank=rc.rank,
                kernels=rc.capture.communication,
                total_ns=rc.capture.communication_ns,
                fusion_time_ns=rc.capture.fusion_time_ns,
            )
            for rc in sorted(ranks, key=lambda r: r.rank)
        ),
    )
