"""The session summary as text."""

from __future__ import annotations

import statistics

from fusiondiff.records.model import traced_name
from fusiondiff.records.units import Column, duration, durations
from fusiondiff.replay.stages import GATE_IMPORTS, PREPARE_HANDOVER
from fusiondiff.report.formats.diff_text import MAX_FUSION_ROWS
from fusiondiff.report.layout import fit_all
from fusiondiff.report.words.questions import TITLES
from fusiondiff.roundtrip.host_totals import host_lines
from fusiondiff.roundtrip.plan import device_words
from fusiondiff.roundtrip.records import FusionRow, RoundTripResult

SUMMARY_FILE = "summary.txt"
"""The whole summary, every row, beside the round trip's replays (``DIR/summary.txt``)."""


def _listed(result: RoundTripResult, top: int | None, limit: int | None) -> list[FusionRow]:
    """The ``top`` first rows; else, past ``limit`` rows, every row that is not SAME and the first
    SAME ones up to ``limit`` (rows are ranked by unexplained time): as ``fusiondiff diff`` lists."""
    rows = list(result.rows)
    if top is not None:
        return rows[:top]
    if limit is None or len(rows) <= limit:
        return rows
    moved = [r for r in rows if r.verdict != "SAME"]
    same = [r for r in rows if r.verdict == "SAME"][: max(limit - len(moved), 0)]
    kept = {id(r) for r in moved + same}
    return [r for r in rows if id(r) in kept]


HANDED_OVER = (
    "each began its turn (CUDA context, compile) as the one before it had taken its samples, and took its own "
    "once that one had exited"
)
"""How a ``--prepare-ahead handover`` turn began and sampled."""


def _who(result: RoundTripResult) -> str:
    return f"up to {result.ahead} process(es) per GPU" if result.ahead > 1 else "each process"


def _ahead_words(result: RoundTripResult) -> str:
    if not result.started_ahead:
        return ""
    if result.forked and result.prepared_ahead in (GATE_IMPORTS, PREPARE_HANDOVER):
        # the default (and handover): the imports were the server's, not each process's
        turn = HANDED_OVER if result.prepared_ahead == PREPARE_HANDOVER else "nothing on the GPU before its turn"
        return (
            f", {_who(result)} forked while the one before ran, from one process that imported torch and nvFuser "
            f"once; {turn}"
        )
    if result.forked:
        return _prepared_words(result) + " (forked from one process that imported torch and nvFuser once)"
    return _prepared_words(result)


IDLE_CONTEXTS = (
    "their idle CUDA contexts sat beside each replay's samples (on the H200 such contexts slowed a fusion 1-2 %)"
)
"""What a run whose spares made their contexts ahead must say: measured in #28 (benchmarks/RESULTS.md)."""


def _prepared_words(result: RoundTripResult) -> str:
    if result.prepared_ahead == PREPARE_HANDOVER:
        return f", {_who(result)} started (imports only) while the one before ran; {HANDED_OVER}"
    if result.prepared_ahead == "context":
        return (
            f", up to {result.ahead} process(es) per GPU started ahead and prepared (imports, CUDA context, "
            "profiler) before their turn, never while another took its samples; each compiles in its own turn; "
            + IDLE_CONTEXTS
        )
    if result.prepared_ahead == "gpu":
        return (
            f", up to {result.ahead} process(es) per GPU started ahead and prepared (imports, CUDA context, "
            "compile, profiler) before their turn, never while another took its samples; " + IDLE_CONTEXTS
        )
    if result.ahead > 1:
        return f", up to {result.ahead} process(es) per GPU started (imports only) while the one before ran"
    return ", each process started (imports only) while the one before it ran"


NAME = 30
"""The fusion column of the table: a longer name is cut in the middle (``nvFusion12...[backward]``)."""


def _short(label: str) -> str:
    if len(label) <= NAME:
        return label
    keep = NAME - 3
    return label[: keep - keep // 2] + "..." + label[-(keep // 2) :]


def render_summary(
    result: RoundTripResult, top: int | None = None, limit: int | None = MAX_FUSION_ROWS, width: int | None = None
) -> str:
    """The session summary as text: what ran how, the fusions live vs replay ranked by unexplained
    time (the ``top`` first; without ``top``, the rows that are not SAME and SAME ones up to
    ``limit`` rows, ``None`` for every row, as :data:`SUMMARY_FILE` holds them), and the step's totals;
    no line wider than ``width`` (:mod:`fusiondiff.report.layout`; None: as long as they are)."""
    lines = [
        f"round trip of {result.live}: {len(result.rows)} live fusion record(s), {len(result.distinct)} distinct",
        f"  isolation: {result.isolation}"
        + _ahead_words(result)
        + f"; {len(result.devices)} worker(s) on {device_words(result.devices)}",
        f"  replayed now {result.replayed_now}, kept from an earlier run {result.resumed}, "
        f"without a replay {len(result.not_replayed)}"
        + ("  (interrupted: rerun to resume)" if result.interrupted else ""),
    ]
    if result.processes:
        seconds = sorted(p.seconds for p in result.processes)
        lines.append(
            f"  replay processes: {len(seconds)}, median {statistics.median(seconds):.1f} s each "
            f"(fastest {seconds[0]:.1f} s, slowest {seconds[-1]:.1f} s)"
        )
    if result.replay_path:
        lines.append(f"  merged replay: {result.replay_path}   diff record: {result.diff_path}")
    shown = _listed(result, top, limit)
    # one unit for the table: gaps in the unit of the times they are gaps of (not ns beside us)
    times = gaps = Column.of(t for r in shown for t in (r.live_median_ns, r.replay_median_ns))
    header = (
        f"  {'#':>5} {'fusion':<{NAME}} {'calls':>5} {times.header('live'):>10} {times.header('replay'):>10} "
        f"{gaps.header('gap'):>9} {gaps.header('unexpl.'):>10}  verdict"
    )
    lines += ["", "fusions, ranked by time nothing recorded explains (per call):", header]
    for r in shown:
        label = traced_name(r.name, r.trace)
        # of several ranks: r1#3 is fusion #3 of rank 1's own capture
        position = f"#{r.index}" if r.rank is None else f"r{r.rank}#{r.rank_index}"
        line = (
            f"  {position:>5} {_short(label):<{NAME}} {r.call_count:>5} {times.cell(r.live_median_ns):>10} "
            f"{times.cell(r.replay_median_ns):>10} {gaps.cell(r.gap_ns, signed=True):>9} "
            f"{gaps.cell(r.unexplained_ns):>10}  {r.verdict}"
        )
        lines.append(line + (f"  ({r.note})" if r.note else ""))
    if len(shown) < len(result.rows):
        left = len(result.rows) - len(shown)
        where = f"{result.directory / SUMMARY_FILE} has every row"
        lines.append(
            f"  ... {left} more fusion(s) not shown (--top N for the first N; {where})"
            if top is not None
            else f"  ... {left} more fusion(s) SAME, not listed ({where}; --top N for the first N)"
        )
    live_all = result.live_total_ns
    live_cmp, replay_cmp, count = result.compared_totals_ns
    shown_live, shown_replay = durations(live_cmp, replay_cmp)
    lines += [
        "",
        "step totals (median x calls, summed over the fusion records):",
        f"  live, every record: {duration(live_all)}",
        f"  records with a replay ({count}): live {shown_live}, replayed {shown_replay}"
        + (f" ({replay_cmp / live_cmp:.2f}x)" if live_cmp > 0 else ""),
    ]
    counts: dict[str, int] = {}
    for r in result.rows:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    lines.append("  verdicts: " + ", ".join(f"{v} {n}" for v, n in sorted(counts.items())))
    lines += host_lines(result)
    if result.questions:
        lines += ["", "the diff's three questions (each with its own gate; see `fusiondiff diff --help`):"]
        for question in result.questions:
            gate = question.outcome
            lines += [f"  {TITLES[question.question]} ({gate}): {question.verdict}", f"    {question.ledger}"]
    if result.rank_rows:
        lines += [
            "",
            "per rank (median x calls over its records with a replay; a fusion every rank ran alike is replayed once):",
        ]
        ranks = result.rank_rows
        totals = Column.of(t for row in ranks for t in (row.live_total_ns, row.replay_total_ns, row.unexplained_ns))
        lines.append(
            f"  {'rank':>4} {'records':>7} {'own':>4} {'shared':>6} {totals.header('live'):>10} "
            f"{totals.header('replay'):>10} {totals.header('unexpl.'):>10}  verdicts   file"
        )
        for row in ranks:
            verdicts = ", ".join(f"{v} {n}" for v, n in row.verdicts)
            lines.append(
                f"  {row.rank if row.rank is not None else '-':>4} {row.records:>7} {row.replayed_here:>4} "
                f"{row.replayed_from_other_rank:>6} {totals.cell(row.live_total_ns):>10} "
                f"{totals.cell(row.replay_total_ns):>10} {totals.cell(row.unexplained_ns):>10}  {verdicts}   {row.path}"
            )
        lines.append("  own: records replayed from their own repro; shared: compared with another rank's replay")
    from fusiondiff.records.escape import printable

    return "\n".join(fit_all((printable(line) for line in lines), width)) + "\n"
