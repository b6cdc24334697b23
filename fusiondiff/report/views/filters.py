"""Narrowing a report to some fusions: ``--top N``, ``--fusion NAME``, ``--min-gap US``.

``--fusion`` is the grammar of every command (:mod:`fusiondiff.records.fusion_spec`). In a diff, ``--fusion`` selects the pairs whose A or B record it names (``#N``
is A's record), or whose label it is.

A report's selection restricts the diff to the matched fusions it picks: the fusion table, the
findings that name them, their definition and source diffs, their trace events, and every
question's ledger, apportioned again over them (:func:`fusiondiff.diff.ledger.recount`). The
verdict lines, the gates and the exit code then speak of those fusions, and every renderer says
that the report is narrowed and how (:attr:`DiffReport.selection`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from fusiondiff.diff.ledger import recount
from fusiondiff.diff.records import FusionPair, UnmatchedFusion
from fusiondiff.records.errors import FusionDiffError, ReportError
from fusiondiff.records.fusion_spec import POSITION, fusion_positions, matching_positions, names_record
from fusiondiff.report.interface import DiffReport


@dataclass(frozen=True)
class Selection:
    """Which matched fusions a report shows. Empty: all of them."""

    top: int | None = None
    """Only the N fusions with the largest median gap (either way), largest first."""
    fusion: str | None = None
    """Only the fusions this ``--fusion`` names on either side (the grammar above), or this label."""
    min_gap_ns: float | None = None
    """Only fusions whose medians differ by at least this much (either way)."""

    def __bool__(self) -> bool:
        return self.top is not None or self.fusion is not None or self.min_gap_ns is not None

    def describe(self) -> str:
        """``--top 3, --min-gap 1.00 us`` (how it was asked for)."""
        parts = []
        if self.fusion is not None:
            parts.append(f"--fusion {self.fusion}")
        if self.min_gap_ns is not None:
            parts.append(f"--min-gap {self.min_gap_ns / 1000:.2f} us")
        if self.top is not None:
            parts.append(f"--top {self.top}")
        return ", ".join(parts)


def _gap_ns(pair: FusionPair) -> float:
    gap = abs(pair.timing.gap_ns)
    return 0.0 if math.isnan(gap) else gap


def select(report: DiffReport, selection: Selection) -> DiffReport:
    """``report`` narrowed to the fusions ``selection`` picks (unchanged when it is empty)."""
    if not selection:
        return report
    if selection.top is not None and selection.top < 1:
        raise ReportError("--top needs a number of fusions, 1 or more")
    result = report.result
    pairs = list(result.pairs)
    unmatched = result.unmatched
    if selection.fusion is not None:
        pairs, unmatched = _named_pairs(report, selection.fusion)
    if selection.min_gap_ns is not None:
        pairs = [p for p in pairs if _gap_ns(p) >= selection.min_gap_ns]
    if selection.top is not None:
        pairs = sorted(pairs, key=_gap_ns, reverse=True)[: selection.top]
    if selection.top is not None or selection.min_gap_ns is not None:
        unmatched = unmatched if selection.fusion is not None else ()
    if not pairs and not unmatched:
        largest = max((_gap_ns(p) for p in result.pairs), default=0.0)
        raise ReportError(
            f"{selection.describe()} selects no fusion (the largest median gap is {largest / 1000:.3f} us): "
            "nothing to answer for"
        )
    narrowed = dataclasses.replace(recount(result, pairs), unmatched=unmatched)
    note = (
        f"narrowed by {selection.describe()}: {len(pairs)} of {len(result.pairs)} matched fusion(s), "
        f"{len(narrowed.findings)} of {len(result.findings)} finding(s); the verdict, the ledgers and the "
        "gates speak of these"
    )
    return dataclasses.replace(report, result=narrowed, selection=note)


def _named_pairs(report: DiffReport, spec: str) -> tuple[list[FusionPair], tuple[UnmatchedFusion, ...]]:
    """The pairs whose A or B record ``spec`` names (``#N``: A's record), or whose label it is; the
    unmatched fusions it names. :class:`ReportError` with candidates when it names nothing."""
    result = report.result
    in_a = set(matching_positions(report.a.fusions, spec))
    in_b = set() if POSITION.fullmatch(spec) else set(matching_positions(report.b.fusions, spec))
    pairs = [p for p in result.pairs if p.index_a in in_a or p.index_b in in_b or p.label == spec]
    unmatched = tuple(u for u in result.unmatched if names_record(spec, u.name, u.trace, u.key))
    if pairs or unmatched:
        return pairs, unmatched
    if in_a:
        raise ReportError(f"A's fusion {spec} is not matched in this diff")
    try:
        fusion_positions(report.a.fusions, spec, "side A of this diff")
    except FusionDiffError as exc:
        raise ReportError(str(exc)) from None
    raise AssertionError("fusion_positions found what matching_positions did not")
