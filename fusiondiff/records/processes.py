"""One program's captures from several fresh processes, pooled into one capture whose fusions
carry each other process's timing (:attr:`FusionRecord.other_process_timings`).

Whether two processes differ is decided by how far a fusion's median moves between processes of
one program (:mod:`fusiondiff.diff.noise`). Where a side was run in several processes (``fusiondiff
replay --processes K``, or several captures of the live program given to ``fusiondiff diff
--also-a``), that spread is measured for the fusion itself instead of read from the calibration.

A fusion of another process joins the record of the same fusion: the same trace, name and
definition (its canonical hash), the n-th such record of one capture with the n-th of the other. A
record of another process with no counterpart is left out and counted; a failed or untimed record
adds nothing.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from fusiondiff.records.model import Capture, FusionRecord, Timing

Key = tuple[str | None, str, str]


@dataclass(frozen=True)
class Pooled:
    """What pooling did: the capture, and how many records of the other processes found no match."""

    capture: Capture
    processes: int
    """Processes pooled, the first capture's included."""
    unmatched: int
    """Records of the other processes with no record of the same fusion in the first capture."""


def key(record: FusionRecord) -> Key:
    """What makes two records of two processes one fusion: trace, name and canonical definition."""
    return (record.trace, record.name, record.definition_hash)


def pool(first: Capture, others: Sequence[Capture]) -> Pooled:
    """``first`` with every timing of the same fusions in ``others`` added to its records'
    :attr:`FusionRecord.other_process_timings` (theirs included, so pooled captures pool again)."""
    slots: dict[Key, list[int]] = defaultdict(list)
    for index, record in enumerate(first.fusions):
        slots[key(record)].append(index)
    extra: list[list[Timing]] = [[] for _ in first.fusions]
    unmatched = 0
    for other in others:
        seen: dict[Key, int] = defaultdict(int)
        for record in other.fusions:
            k = key(record)
            places = slots.get(k, [])
            if seen[k] >= len(places):
                unmatched += 1
                continue
            place = places[seen[k]]
            seen[k] += 1
            if record.failure is None and record.timing.samples_ns:
                extra[place].extend((record.timing, *record.other_process_timings))
    fusions = tuple(
        dataclasses.replace(record, other_process_timings=(*record.other_process_timings, *more)) if more else record
        for record, more in zip(first.fusions, extra)
    )
    return Pooled(dataclasses.replace(first, fusions=fusions), 1 + len(others), unmatched)


def processes_of(record: FusionRecord) -> tuple[Timing, ...]:
    """Every process's timing of the fusion: its own first, then the others'."""
    return (record.timing, *record.other_process_timings)
