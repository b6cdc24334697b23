"""The session summary as text."""

from __future__ import annotations

import math
import statistics

from fusiondiff.model import traced_name
from fusiondiff.roundtrip.plan import device_words
from fusiondiff.roundtrip.records import RoundTripResult


def _us(ns: float) -> str:
    return "-" if math.isnan(ns) else f"{ns / 1000:.2f}"


def render_summary(result: RoundTripResult, top: int | None = None) -> str:
    """The session summary as text: what ran how, every fusion (or the ``top`` first) live vs
    replay ranked by unexplained time, and the step's totals (times in us)."""
    lines = [
        f"round trip of {result.live}: {len(result.rows)} live fusion record(s), {len(result.distinct)} distinct",
        f"  isolation: {result.isolation}"
        + (", each process started (imports only) while the one before it ran" if result.started_ahead else "")
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
    header = f"  {'#':>5} {'fusion':<36} {'calls':>5} {'live us':>10} {'replay us':>10} {'gap us':>9} {'unexpl. us':>10}  verdict"
    lines += ["", "fusions, ranked by time nothing recorded explains (per call):", header]
    shown = result.rows if top is None else result.rows[:top]
    for r in shown:
        label = traced_name(r.name, r.trace)
        gap = "-" if math.isnan(r.gap_ns) else f"{r.gap_ns / 1000:+.2f}"
        # of several ranks: r1#3 is fusion #3 of rank 1's own capture
        position = f"#{r.index}" if r.rank is None else f"r{r.rank}#{r.rank_index}"
        line = (
            f"  {position:>5} {label[:36]:<36} {r.call_count:>5} {_us(r.live_median_ns):>10} "
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
    if result.rank_rows:
        lines += [
            "",
            "per rank (median x calls over its records with a replay; a fusion every rank ran alike is replayed once):",
            f"  {'rank':>4} {'records':>7} {'own':>4} {'shared':>6} {'live us':>10} {'replay us':>10} "
            f"{'unexpl. us':>10}  verdicts   file",
        ]
        for row in result.rank_rows:
            verdicts = ", ".join(f"{v} {n}" for v, n in row.verdicts)
            lines.append(
                f"  {row.rank if row.rank is not None else '-':>4} {row.records:>7} {row.replayed_here:>4} "
                f"{row.replayed_from_other_rank:>6} {_us(row.live_total_ns):>10} {_us(row.replay_total_ns):>10} "
                f"{_us(row.unexplained_ns):>10}  {verdicts}   {row.path}"
            )
        lines.append("  own: records replayed from their own repro; shared: compared with another rank's replay")
    from fusiondiff.escape import printable

    return "\n".join(printable(line) for line in lines) + "\n"
