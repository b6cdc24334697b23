"""``fusiondiff timers`` as text: two timers' recordings of the same fusions side by side
(:class:`fusiondiff.diff.timers.Reconciliation`), every disagreement in words."""

from __future__ import annotations

from fusiondiff.diff.timers import Disagreement, LaunchValue, Reconciliation
from fusiondiff.records.model import NVFUSER


def _launch_value(value: LaunchValue) -> str:
    return f"[{', '.join(str(v) for v in value)}]" if isinstance(value, tuple) else str(value)


def disagreement_line(disagreement: Disagreement, tolerance: float) -> str:
    """One disagreement in one line (``nvfuser_pointwise_g0 block: [128, 1, 1] vs [256, 1, 1]``)."""
    d = disagreement
    apart = f"more than {tolerance * 100:g} % apart"
    if d.kind == "launch" and d.launch is not None:
        launch = d.launch
        return f"{d.kernel} {launch.field}: {_launch_value(launch.a)} vs {_launch_value(launch.b)}"
    if d.kind in ("kernel_median", "fusion_median") and d.median_a_ns is not None and d.median_b_ns is not None:
        medians = f"{d.median_a_ns / 1000:.2f} vs {d.median_b_ns / 1000:.2f} us, {apart}"
        if d.kind == "kernel_median":
            return f"{d.kernel} medians {medians}"
        without = " (without the kernels nvFuser did not generate)" if d.without_outside else ""
        return f"fusion medians{without} {medians}"
    if d.kind == "only_one_side":
        return f"{d.kernel} only in {d.side}"
    return f"failed on one side: {d.failure}"


def render_reconciliation(result: Reconciliation) -> str:
    """A plain-text table: per fusion and kernel the two medians (us), their ratio, and what disagrees."""
    header = f"{'fusion / kernel':<44} {result.timer_a + ' us':>14} {result.timer_b + ' us':>14} {'B/A':>7}  agreement"
    lines = [
        f"timer A: {result.timer_a}, timer B: {result.timer_b}; medians within {result.tolerance * 100:g} % agree",
        header,
    ]
    for f in result.fusions:
        verdict = "ok" if not f.disagreements else f"{len(f.disagreements)} disagreement(s)"
        lines.append(
            f"{f.name:<44} {f.median_a_ns / 1000:>14.2f} {f.median_b_ns / 1000:>14.2f} {f.ratio:>7.3f}  {verdict}"
        )
        for k in f.kernels:
            lines.append(f"  {k.name:<42} {k.median_a_ns / 1000:>14.2f} {k.median_b_ns / 1000:>14.2f} {k.ratio:>7.3f}")
        for name, median_ns in f.outside_nvfuser:
            side = result.timer_b if result.timer_a == NVFUSER else result.timer_a
            lines.append(f"    = {side} only: {name} {median_ns / 1000:.2f} us, not an nvFuser kernel (explained)")
        lines += [f"    ! {disagreement_line(d, result.tolerance)}" for d in f.disagreements]
    lines += [f"{name}: only in A" for name in result.unmatched_a]
    lines += [f"{name}: only in B" for name in result.unmatched_b]
    disagreeing = sum(1 for f in result.fusions if f.disagreements)
    unmatched = len(result.unmatched_a) + len(result.unmatched_b)
    explained = sum(1 for f in result.fusions if f.outside_nvfuser)
    if explained:
        lines.append(
            f"{explained} fusion(s) launched kernels nvFuser did not generate (marked =): nvFuser's PythonProfiler "
            "reports only nvFuser's own kernels, so only the other timer saw them; their time is left out of "
            "those fusions' comparison"
        )
    if result.agree:
        lines.append(f"the timers agree on all {len(result.fusions)} fusion(s)")
    else:
        lines.append(
            f"the timers disagree: {disagreeing} of {len(result.fusions)} paired fusion(s), {unmatched} unpaired"
        )
    return "\n".join(lines) + "\n"
