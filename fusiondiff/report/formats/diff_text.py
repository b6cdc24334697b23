"""Renderers of a :class:`DiffResult`: a short plain-text summary for the terminal, and JSON."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from fusiondiff.diff.records import DiffResult, FusionPair, TimingVerdict
from fusiondiff.records.codec import to_jsonable
from fusiondiff.records.escape import printable
from fusiondiff.records.model import traced_name
from fusiondiff.records.units import Column, duration, floor_cell, ratio
from fusiondiff.report.layout import fit_all
from fusiondiff.report.text import NAME_WIDTH
from fusiondiff.report.views.document import Document, Item, Section, build_document
from fusiondiff.report.views.speed_of_light_view import peaks_text
from fusiondiff.report.words import wording
from fusiondiff.report.words.questions import kernel_line, questions_json
from fusiondiff.report.words.report_words import LEGEND, P_VALUE_DASH  # noqa: F401 - read from here too

verdict_line = kernel_line
"""The kernel question's verdict line, by its older name (:func:`fusiondiff.report.words.questions.kernel_line`)."""

MAX_FUSION_ROWS = 20
"""Beyond this many fusions, SAME ones are counted instead of listed."""
MAX_UNMATCHED = 40
"""Unmatched (or not replayed) fusions named; a step's round trip leaves hundreds unreplayed,
every record that shares its distinct fusion's replay, and the JSON record names them all."""


WIDE = (12, 12, 8)
"""The widths of the A median, B median and floor columns; :data:`NARROW` (their headers'
widths) where the table is laid out for a terminal, so that a kernel name of ordinary length
keeps its place in the name column at 100 columns."""
NARROW = (11, 11, 7)


def _row(name: str, t: TimingVerdict, width: int, column: Column, cols: tuple[int, int, int] = WIDE) -> list[str]:
    a, b, p = cols
    numbers = (
        f"{column.cell(t.median_a_ns):>{a}}  {column.cell(t.median_b_ns):>{b}}  {ratio(t.ratio):>7}  "
        f"{floor_cell(t.floor, t.p_value):>{p}}  {t.verdict}"
    )
    if len(name) > width:  # an ATen kernel's C++ signature: a line of its own, its numbers in the column below
        return [f"  {name}", f"  {'':<{width}}  {numbers}"]
    return [f"  {name:<{width}}  {numbers}"]


def _kernels_shown(pair: FusionPair) -> bool:
    """A pair's kernels get rows of their own where one is unmatched or, of several, one differs."""
    return bool(pair.unmatched_kernels) or (
        len(pair.kernels) > 1 and any(k.timing.verdict != "SAME" for k in pair.kernels)
    )


def _pair_lines(pair: FusionPair, width: int, column: Column, cols: tuple[int, int, int] = WIDE) -> list[str]:
    lines = _row(pair.label, pair.timing, width, column, cols)
    if _kernels_shown(pair):
        for k in pair.kernels:
            lines += _row(f"  {k.normalized_name}", k.timing, width, column, cols)
        lines += [
            f"    {k.normalized_name}: only in {k.side} ({duration(k.median_ns)} median)"
            for k in pair.unmatched_kernels
        ]
    return lines


def listed_pairs(pairs: Sequence[FusionPair], limit: int = MAX_FUSION_ROWS) -> list[FusionPair]:
    """The fusions a summary lists, in capture order: all of them up to ``limit``; past it, every
    one whose speed differs (or that has a kernel one side lacks), then the SAME ones that take
    longest, up to ``limit`` rows in all (a table of SAME fusions still shows the largest)."""
    if len(pairs) <= limit:
        return list(pairs)
    moved = {i for i, p in enumerate(pairs) if p.timing.verdict != "SAME" or p.unmatched_kernels}

    def median(i: int) -> float:
        value = pairs[i].timing.median_a_ns
        return -1.0 if math.isnan(value) else value

    same = sorted((i for i in range(len(pairs)) if i not in moved), key=median, reverse=True)
    kept = moved | set(same[: max(limit - len(moved), 0)])
    return [p for i, p in enumerate(pairs) if i in kept]


NUMBERS_WIDTH = 2 + NARROW[0] + 2 + NARROW[1] + 2 + 7 + 2 + NARROW[2] + 2 + len("verdict (B vs A)")
"""The fusion table's columns after the name, laid out for a terminal."""


def _fusion_section(result: DiffResult, line_width: int | None = None) -> list[str]:
    if not result.pairs:
        return []
    listed = listed_pairs(result.pairs)
    # the column fits the labels and the kernel names of ordinary length (an ATen kernel's C++
    # signature, longer than NAME_WIDTH, gets a line of its own instead)
    kernels = [
        len(k.normalized_name) + 2  # indented under its fusion
        for p in listed
        if _kernels_shown(p)
        for k in p.kernels
        if len(k.normalized_name) <= NAME_WIDTH
    ]
    width = max([min(max(len(p.label) + 4 for p in listed), 60), *kernels])
    cols = WIDE
    if line_width is not None:  # a longer label gets a line of its own, its numbers in the row below
        width = min(width, max(line_width - 2 - NUMBERS_WIDTH, len("fusion / kernel")))
        cols = NARROW
    verdicts = [v for p in listed for v in (p.timing, *(k.timing for k in p.kernels))]
    times = [t for v in verdicts for t in (v.median_a_ns, v.median_b_ns)]
    column = Column.of(times)  # A's and B's medians in one unit, to be read side by side
    header = (
        f"  {'fusion / kernel':<{width}}  {column.header('A median'):>{cols[0]}}  {column.header('B median'):>{cols[1]}}  "
        f"{'B/A':>7}  {'floor':>{cols[2]}}  verdict (B vs A)"
    )
    lines = ["fusions", header]
    for pair in listed:
        lines += _pair_lines(pair, width, column, cols)
    if len(listed) < len(result.pairs):
        lines.append(
            f"  ... {len(result.pairs) - len(listed)} more fusion(s) SAME, not listed (the JSON record has all: --json)"
        )
    lines.append(f"  {LEGEND}")
    return lines


def _finding_lines(item: Item) -> list[str]:
    lines = [f"  {item.rank}. [{item.rule}, {item.role}] {item.title}  ({item.explains})"]
    lines += [f"       {line}" for line in item.evidence]
    for link in item.links:
        named = ", ".join(f"#{rank} {rule}" for rank, rule in link.targets)
        lines.append(f"       {link.heading}: {named}")
    return lines


def _wrap(items: list[str], indent: str, width: int = 100) -> list[str]:
    """Comma-separated items on lines of at most ``width`` characters, never splitting an item."""
    lines: list[str] = []
    line = ""
    for item in items:
        candidate = f"{line}, {item}" if line else item
        if line and len(indent) + len(candidate) > width:
            lines.append(indent + line + ",")
            candidate = item
        line = candidate
    return lines + [indent + line]


_ROUNDTRIP_HINT = "; `fusiondiff roundtrip` pairs every live record with its distinct fusion's replay"


def _more_line(count: int, hint: str = "") -> list[str]:
    if count <= MAX_UNMATCHED:
        return []
    return [f"  ... {count - MAX_UNMATCHED} more in the JSON record (--json FILE){hint}"]


def render_diff_text(result: DiffResult, width: int | None = None, selection: str = "") -> str:
    """The terminal summary of ``result`` alone (no captures: the diff's warnings only), laid out
    as :func:`render_document_text` lays it out."""
    return render_document_text(build_document(result, selection=selection), result, width)


def render_document_text(document: Document, result: DiffResult, width: int | None = None) -> str:
    """A short terminal summary: first the answer (each question's line, labelled ``kernel:``,
    ``host:``, ``fidelity:``), then how it was narrowed (:mod:`fusiondiff.report.views.filters`)
    and where it came from (each side's path); per fusion the medians (us), ratio and verdict of B
    relative to A; unmatched fusions; each question's ledger and ranked findings with their
    evidence (the document's, :mod:`fusiondiff.report.views.document`); warnings. Plain text,
    every line escaped (:func:`~fusiondiff.records.escape.printable`), since names and sources
    come from captures; no line wider than ``width`` (:mod:`fusiondiff.report.layout`; None: as
    long as they are)."""
    lines = [
        *(f"{a.question}: {a.line}" for a in document.answers),
        *([f"({document.selection})"] if document.selection else []),
        *(f"{label}: {source}" for label, source in document.origins),
        "",
    ]
    section = _fusion_section(result, width)
    if section:
        lines += [*section, ""]
    lines += _unmatched_lines(result)
    for s in document.sections:
        lines += [] if s.quiet else _section_lines(s, result, width)
    lines += _warning_lines(document)
    return "\n".join(fit_all((printable(line) for line in lines), width)).rstrip("\n") + "\n"


def _warning_lines(document: Document) -> list[str]:
    """The warnings the terminal lists (:attr:`~fusiondiff.report.views.document.Document.warnings_shown`)
    and how many more the Markdown and HTML reports list."""
    if not document.warnings:
        return []
    shown = document.warnings_shown
    more = len(document.warnings) - shown
    rest = [f"  ... {more} more warning(s): `fusiondiff report A B --format md` lists them all"] if more else []
    return ["warnings", *(f"  {w}" for w in document.warnings[:shown]), *rest, ""]


def _unmatched_lines(result: DiffResult) -> list[str]:
    """The fusions the replay left out, or those matched on neither side, named up to
    :data:`MAX_UNMATCHED`."""
    if result.b_replays_subset:
        names = [traced_name(u.name, u.trace) for u in result.not_replayed[:MAX_UNMATCHED]]
        return [
            f"not replayed by {result.replay_side} ({len(result.not_replayed)} fusion(s) of {result.live_side})",
            *_wrap(names, "  "),
            *_more_line(len(result.not_replayed), _ROUNDTRIP_HINT if result.b_from_roundtrip else ""),
            "",
        ]
    if not result.unmatched:
        return []
    lines = ["unmatched fusions"]
    for u in result.unmatched[:MAX_UNMATCHED]:
        lines.append(f"  {u.side}: {traced_name(u.name, u.trace)} ({duration(u.median_ns)} median): {u.reason}")
    return [*lines, *_more_line(len(result.unmatched)), ""]


def _section_lines(section: Section, result: DiffResult, width: int | None) -> list[str]:
    """A question's section: its gate and ledger, then the findings the terminal shows of it
    (:attr:`~fusiondiff.report.views.document.Section.shown`), the GPU's with each kernel against
    the two GPUs' peaks under it."""
    lines = [f"{section.title} ({section.gate}): {section.ledger}"]
    for item in section.items[: section.shown]:
        lines += _finding_lines(item)
        if item.peaks:
            lines += peaks_text(result, width)
    if section.left_out:
        lines.append(f"  ... {section.left_out} more finding(s) in the JSON record (--json)")
    return [*lines, ""]


def json_safe(value: Any) -> Any:
    """JSON-ready data with NaN and infinity (which JSON lacks) written as null."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:  # most values: no isinstance chain
        return value
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    return value


def render_diff_json(result: DiffResult) -> str:
    """The whole diff record as JSON (NaN and infinity as null), with the verdict added:
    ``verdict`` (the kernel question's line), ``same_speed``, ``properties_identical``,
    ``comparable`` (both), ``exit_code`` (the default gate) and ``questions`` (each question's
    verdict line, whether it passes, and the exit code with its gate added)."""
    data = json_safe(to_jsonable(wording.worded(result)))
    data["verdict"] = verdict_line(result)
    data["same_speed"] = result.same_speed
    data["properties_identical"] = result.properties_identical
    data["comparable"] = result.comparable
    data["exit_code"] = result.exit_code()
    data["questions"] = questions_json(result)
    return indented_json(data)


def indented_json(data: Any) -> str:
    """``json.dumps(data, indent=1, allow_nan=False)`` and a newline, byte for byte, made by the C
    encoder and re-indented by msgspec: the indenting encoder is pure Python, 20 times slower
    (minutes for a diff of 100,000 kernels)."""
    import msgspec

    return msgspec.json.format(json.dumps(data, allow_nan=False), indent=1) + "\n"
