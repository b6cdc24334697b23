"""Narrowing to some fusions: the one ``--fusion`` grammar of every command, and a report's
``--top N``, ``--fusion NAME``, ``--min-gap US``.

``--fusion`` (``show``, ``repro``, ``report``) names records of a capture (:func:`fusion_positions`):

- ``#N``: the record at position N, from ``#0``, as ``fusiondiff show`` numbers them (two records
  can share every name: one region run with an aligned and a misaligned input);
- a name (``nvFusion0``), a name with its pass as reports print it (``nvFusion0 [forward]``), a key
  (``forward/nvFusion0/1a2b3c4d5e6f``) or the start of a key (``forward/nvFusion0``).

Every record it names is selected (``repro`` wants one and says so when there are more). A name
that matches nothing is one line with at most :data:`MAX_NAMED` candidates ("did you mean"), never
a list of every record. In a diff, ``--fusion`` selects the pairs whose A or B record it names (``#N``
is A's record), or whose label it is.

A report's selection restricts the diff to the matched fusions it picks: the fusion table, the
findings that name them, their definition and source diffs, their trace events. The verdict then
speaks of those fusions, and every renderer says that the report is narrowed and how
(:attr:`DiffReport.selection`); the exit code of ``fusiondiff report`` stays that of the whole diff.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from fusiondiff.diff.records import FusionPair, UnmatchedFusion
from fusiondiff.errors import FusionDiffError, ReportError
from fusiondiff.model import FusionRecord, traced_name
from fusiondiff.report.interface import DiffReport

MAX_NAMED = 5
"""Records an error names at most: every one of a small capture, else the closest candidates."""
_POSITION = re.compile(r"#([0-9]{1,9})")


def names_record(spec: str, name: str, trace: str | None, key: str) -> bool:
    """``spec`` names this record by name, name with its pass, key or start of its key."""
    return spec in (name, key, traced_name(name, trace)) or ("/" in spec and key.startswith(spec))


def _suggestions(fusions: Sequence[FusionRecord], spec: str) -> str:
    """At most :data:`MAX_NAMED` records like ``spec``, or the first few names when none is."""
    first: dict[str, int] = {}
    for i, f in enumerate(fusions):
        for text in (f.name, traced_name(f.name, f.trace), f.key):
            first.setdefault(text, i)
    close = difflib.get_close_matches(spec, list(first), n=3, cutoff=0.6)
    if close:
        return "did you mean " + ", ".join(f"{c} (#{first[c]})" for c in close) + "?"
    names = list(dict.fromkeys(f.name for f in fusions))[:3]
    return f"its names include {', '.join(names)}."


def no_fusion(fusions: Sequence[FusionRecord], spec: str, origin: str) -> str:
    """The one-line error for a ``--fusion`` that names none of ``fusions``."""
    if len(fusions) <= MAX_NAMED:
        available = ", ".join(f"{f.name} ({f.key}, #{i})" for i, f in enumerate(fusions))
        return f"{origin} has no fusion {spec!r}; available: {available}"
    return (
        f"{origin} has no fusion {spec!r}; {_suggestions(fusions, spec)} It holds {len(fusions)} records, "
        f"#0 to #{len(fusions) - 1} (`fusiondiff show` lists them)"
    )


def _matching(fusions: Sequence[FusionRecord], spec: str) -> list[int]:
    position = _POSITION.fullmatch(spec)
    if position:
        return [int(position[1])] if int(position[1]) < len(fusions) else []
    return [i for i, f in enumerate(fusions) if names_record(spec, f.name, f.trace, f.key)]


def fusion_positions(fusions: Sequence[FusionRecord], spec: str, origin: str = "the capture") -> list[int]:
    """The positions of the records ``spec`` names (see the module docstring), in capture order.
    Raises :class:`FusionDiffError` when it names none."""
    found = _matching(fusions, spec)
    if found:
        return found
    if _POSITION.fullmatch(spec):
        held = f"#0 to #{len(fusions) - 1}" if fusions else "none"
        raise FusionDiffError(f"{origin} has no fusion {spec}: it holds {len(fusions)}, {held}")
    raise FusionDiffError(no_fusion(fusions, spec, origin))


def several_named(fusions: Sequence[FusionRecord], spec: str, positions: Sequence[int], origin: str) -> str:
    """The one-line error for a ``--fusion`` that names several records where one is needed."""
    listed = ", ".join(f"#{i} {fusions[i].key}" for i in positions[:MAX_NAMED])
    more = f" and {len(positions) - MAX_NAMED} more" if len(positions) > MAX_NAMED else ""
    return f"{spec!r} names {len(positions)} fusions in {origin}: {listed}{more}; give the key or #N"


def capture_positions(fusions: Sequence[FusionRecord], fusion: str | None, top: int | None, origin: str) -> list[int]:
    """What ``show`` prints: the positions ``fusion`` names (every record without it), then of those
    the ``top`` with the largest median time, largest first."""
    positions = list(range(len(fusions))) if fusion is None else fusion_positions(fusions, fusion, origin)
    if top is not None:

        def median(i: int) -> float:
            value = fusions[i].timing.median_ns
            return -1.0 if math.isnan(value) else value

        positions = sorted(positions, key=median, reverse=True)[:top]
    return positions


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
    labels = {p.label for p in pairs}
    findings = tuple(f for f in result.findings if labels & set(f.fusions))
    narrowed = dataclasses.replace(result, pairs=tuple(pairs), unmatched=unmatched, findings=findings)
    note = (
        f"narrowed by {selection.describe()}: {len(pairs)} of {len(result.pairs)} matched fusion(s), "
        f"{len(findings)} of {len(result.findings)} finding(s); the verdict speaks of these"
    )
    return dataclasses.replace(report, result=narrowed, selection=note)


def _named_pairs(report: DiffReport, spec: str) -> tuple[list[FusionPair], tuple[UnmatchedFusion, ...]]:
    """The pairs whose A or B record ``spec`` names (``#N``: A's record), or whose label it is; the
    unmatched fusions it names. :class:`ReportError` with candidates when it names nothing."""
    result = report.result
    in_a = set(_matching(report.a.fusions, spec))
    in_b = set() if _POSITION.fullmatch(spec) else set(_matching(report.b.fusions, spec))
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
    raise AssertionError("fusion_positions found what _matching did not")
