"""The terminal summary of ``fusiondiff ranks``: one verdict line per rank, then the stragglers,
then each rank's communication kernels side by side."""

from __future__ import annotations

from fusiondiff.diff.ranks import RankComparison, RanksResult
from fusiondiff.diff.records import Finding
from fusiondiff.records.escape import printable
from fusiondiff.records.units import Column, duration, durations
from fusiondiff.report.formats.diff_text import verdict_line
from fusiondiff.report.views.document import item_of


def _top_finding(comparison: RankComparison) -> str:
    findings: tuple[Finding, ...] = comparison.result.findings
    if not findings:
        return "no recorded property differs (unexplained)"
    item = item_of(findings[0], {})
    evidence = f"; {item.evidence[0]}" if item.evidence else ""
    return f"[{item.rule}, {item.role}] {item.title} ({item.explains}){evidence}"


def _communication_lines(result: RanksResult) -> list[str]:
    """Per collective, each rank's calls and their total time; each rank's totals; the imbalance."""
    ranks = result.communication
    if not any(c.kernels for c in ranks):
        return []
    names = sorted({k.name for c in ranks for k in c.kernels})
    width = max(40, *(len(n) for n in names))
    found = {(c.rank, k.name): k for c in ranks for k in c.kernels}
    # one unit for every rank's totals, so that the ranks read side by side
    column = Column.of([k.total_ns for k in found.values()] + [c.fusion_time_ns for c in ranks])
    cells = [(f"rank {c.rank} calls", f"rank {c.rank} total {column.unit}") for c in ranks]
    widths = [(max(7, len(calls)), max(12, len(total))) for calls, total in cells]

    def row(name: str, values: list[tuple[str, str]]) -> str:
        return f"  {name:<{width}}" + "".join(f" {a:>{wa}} {b:>{wb}}" for (a, b), (wa, wb) in zip(values, widths))

    lines = [
        "communication kernels per rank (kept apart from fusion time): calls, and their total time",
        row("name", cells),
    ]
    for name in names:
        values = []
        for c in ranks:
            k = found.get((c.rank, name))
            values.append(("-", "-") if k is None else (str(k.calls), column.cell(k.total_ns)))
        lines.append(row(name, values))
    lines.append(
        row("communication total", [("", column.cell(c.total_ns) if c.kernels else "not recorded") for c in ranks])
    )
    lines.append(row("fusion time (median x calls)", [("", column.cell(c.fusion_time_ns)) for c in ranks]))
    imbalance = result.communication_imbalance
    if imbalance is not None:
        most, least = durations(imbalance.most_ns, imbalance.least_ns)
        lines.append(
            f"  time in collectives differs by {imbalance.spread * 100:.0f} %: rank {imbalance.most_rank} "
            f"{most}, rank {imbalance.least_rank} {least}"
        )
        lines.append(
            "  a collective ends when the last rank reaches it, so this time is largely waiting for the other ranks: "
            f"rank {imbalance.most_rank}, which waits longest, is usually not the straggler; rank "
            f"{imbalance.least_rank}, which waits least, is the likelier one to hold the others back"
        )
    lines.append("")
    return lines


def render_ranks_text(result: RanksResult) -> str:
    """Per rank the verdict of its diff against the reference rank (B is that rank); then the
    stragglers, the largest total fusion time gap per step first, each with its top finding."""
    ref = result.reference_rank
    lines = ["fusiondiff ranks", f"  reference (A): rank {ref}: {result.reference_path}", ""]
    lines.append(f"per rank, against rank {ref} (B is the rank)")
    for c in result.comparisons:
        lines.append(f"  rank {c.rank}: {verdict_line(c.result)}")
        lines.append(f"    {c.path}; fusion time per step {duration(c.gap_ns, signed=True)} against rank {ref}")
        lines += [f"    placement: {note}" for note in c.placement]
    lines.append("")
    stragglers = result.stragglers
    if stragglers:
        lines.append(f"stragglers, ranked by fusion time per step over rank {ref}")
        for position, c in enumerate(stragglers, 1):
            slower = sum(1 for p in c.result.pairs if p.timing.verdict == "SLOWER")
            lines.append(
                f"  {position}. rank {c.rank}: {duration(c.gap_ns, signed=True)} per step, slower in {slower} fusion(s)"
            )
            lines.append(f"     top finding: {_top_finding(c)}")
    elif result.comparisons and all(c.gap_ns < 0 for c in result.comparisons):
        lines.append(f"no rank is slower than rank {ref}; every other rank is faster: rank {ref} is the straggler")
    else:
        lines.append(f"no straggler: no rank spends longer in its fusions than rank {ref}")
    lines.append("")
    lines += _communication_lines(result)
    warnings = list(result.warnings) + [f"rank {c.rank}: {w}" for c in result.comparisons for w in c.result.warnings]
    if warnings:
        lines.append("warnings")
        lines += [f"  {w}" for w in warnings]
        lines.append("")
    return "\n".join(printable(line) for line in lines).rstrip("\n") + "\n"
