"""Thunder's own figures beside fusiondiff's, per nvFusion region replayed from Thunder's folder.

A replay of a Thunder report folder names each fusion ``<region>:fusionN`` and carries the medians
Thunder printed (``Capture.thunder_figures``). For each region with a paired fusion this section
shows, side by side, Thunder's WallTime and KernelTime medians of each executor it compared and
fusiondiff's kernel and host medians of the same region, with what each timer measured: the
figures differ by what they include before any of them is wrong.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from fusiondiff.diff.records import FusionPair
from fusiondiff.records.escape import printable
from fusiondiff.records.model import Capture
from fusiondiff.records.thunder import ThunderFigure
from fusiondiff.records.units import duration
from fusiondiff.report.interface import DiffReport

TIMER_MEANINGS = {
    "WallTime": "Thunder's WallTime: wall time per call of fd.execute called back to back, the GPU "
    "synchronized around each block of calls (torch Timer's adaptive_autorange): the kernels (L2 warm, no "
    "flush) and the host time of fd.execute and its launches that they do not hide",
    "WallTimeWithMemoryUsage": "Thunder's WallTimeWithMemoryUsage: as WallTime, with the peak CUDA memory",
    "KernelTime": "Thunder's KernelTime: the kernels' device time per call from torch.profiler, back to back, "
    "L2 warm, no flush",
}
"""What each of Thunder's timers measured, in words; a timer not listed is shown by its name."""
FUSIONDIFF_MEANINGS = (
    "fusiondiff kernel: the fusion's kernels' device time per call (median of its samples, each kernel "
    "timed on the device), L2 flushed before each sample (cold L2)",
    "fusiondiff host: fd.execute's host time per call, timed apart from the kernels",
)


def thunder_rows(report: DiffReport) -> Iterator[tuple[str, ...]]:
    """Rows (region, figure, side A, side B): Thunder's figures of each region that has a paired
    fusion, then fusiondiff's kernel and host medians of that pair; the region named on its first
    row only, as the report's tables do."""
    for side, capture in (("B", report.b), ("A", report.a)):
        by_region = _by_region(capture.thunder_figures)
        for region, figures in by_region.items():
            pair = _pair_of(report.result.pairs, capture, region, side)
            if pair is None:
                continue
            rows = []
            for figure in figures:
                value = duration(figure.median_ns)
                a, b = ("", value) if side == "B" else (value, "")
                rows.append((f"Thunder {figure.timer} ({figure.executor})", a, b))
            t = pair.timing
            rows.append(("fusiondiff kernel", duration(t.median_a_ns), duration(t.median_b_ns)))
            if pair.host is not None:
                rows.append(("fusiondiff host", duration(pair.host.median_a_ns), duration(pair.host.median_b_ns)))
            for position, row in enumerate(rows):
                yield (region if position == 0 else "", *row)


def _by_region(figures: Sequence[ThunderFigure]) -> dict[str, list[ThunderFigure]]:
    grouped: dict[str, list[ThunderFigure]] = {}
    for figure in figures:
        grouped.setdefault(figure.region, []).append(figure)
    return grouped


def _pair_of(pairs: Sequence[FusionPair], capture: Capture, region: str, side: str) -> FusionPair | None:
    """The pair whose fusion on ``side`` was replayed from ``region``'s script (named ``region:fusionN``)."""
    for pair in pairs:
        index = pair.index_b if side == "B" else pair.index_a
        if capture.fusions[index].name.startswith(f"{region}:"):
            return pair
    return None


def thunder_text(report: DiffReport, width: int | None = None) -> str:
    """The section of the terminal and text reports (empty when no side carries Thunder's figures
    for a paired region); every line escaped, since region names come from file names."""
    from fusiondiff.report.layout import fit_all, table

    rows = list(thunder_rows(report))
    if not rows:
        return ""
    lines = ["", "Thunder's own figures beside fusiondiff's (medians per call; each timer measures another thing)"]
    lines += table(("region", "figure", "A", "B"), rows, width)
    lines += [f"  {meaning}" for meaning in _meanings(rows)]
    return "".join(printable(line) + "\n" for line in fit_all(lines, width))


def _meanings(rows: Sequence[tuple[str, ...]]) -> list[str]:
    """What each timer shown measured: Thunder's timers in the rows, then fusiondiff's two."""
    timers = sorted({figure.split(" ")[1] for _, figure, *_ in rows if figure.startswith("Thunder ")})
    return [TIMER_MEANINGS.get(timer, f"Thunder {timer}") for timer in timers] + list(FUSIONDIFF_MEANINGS)


def thunder_markdown(report: DiffReport) -> list[str]:
    """The section of the Markdown report (no lines when no side carries Thunder's figures for a
    paired region); every cell escaped by :func:`md_text.table`."""
    from fusiondiff.report.formats.md_text import inline, table

    rows = list(thunder_rows(report))
    if not rows:
        return []
    lines = [
        "### Thunder's own figures beside fusiondiff's",
        "",
        "Medians per call; each timer measures another thing.",
        "",
    ]
    lines += table(("region", "figure", report.result.label_a, report.result.label_b), rows, "llrr")
    return [*lines, "", *(f"- {inline(meaning)}" for meaning in _meanings(rows)), ""]


def thunder_html(report: DiffReport) -> str:
    """The section of the HTML report (empty when there is nothing to show), every cell escaped
    and cut as the page's other texts are (:mod:`fusiondiff.report.formats.html_parts`)."""
    from fusiondiff.report.formats.html_parts import escaped, number_table

    rows = list(thunder_rows(report))
    if not rows:
        return ""
    table = number_table(("region", "figure", report.result.label_a, report.result.label_b), rows, left=(0, 1))
    notes = "".join(f"<li>{escaped(meaning)}</li>" for meaning in _meanings(rows))
    return (
        "<h2>Thunder's own figures beside fusiondiff's</h2><p>Medians per call; each timer measures another thing.</p>"
        f"{table}<ul>{notes}</ul>"
    )
