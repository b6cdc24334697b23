"""Renderers of a :class:`DiffResult`: a short plain-text summary for the terminal, and JSON."""

from __future__ import annotations

import json
import math
from typing import Any

from fusiondiff.diff.model import DiffResult, Finding, FusionPair, TimingVerdict
from fusiondiff.escape import printable
from fusiondiff.model import to_jsonable

MAX_FUSION_ROWS = 20
"""Beyond this many fusions, SAME ones are counted instead of listed."""
MAX_FINDINGS = 10
"""Findings shown with their evidence; the JSON record holds all of them."""


def _us(ns: float) -> str:
    return "-" if ns is None or math.isnan(ns) else f"{ns / 1000:.2f}"


def _ratio(ratio: float) -> str:
    return "-" if math.isnan(ratio) else f"{ratio:.2f}x"


def _p(p: float | None) -> str:
    return "-" if p is None else f"{p:.1e}"


def _row(name: str, t: TimingVerdict, width: int) -> str:
    return (
        f"  {name:<{width}}  {_us(t.median_a_ns):>12}  {_us(t.median_b_ns):>12}  {_ratio(t.ratio):>7}  "
        f"{_p(t.p_value):>8}  {t.verdict}"
    )


def _headline(result: DiffResult) -> str:
    if result.comparable and result.b_replays_subset:
        return (
            f"the two runs are comparable for the {len(result.pairs)} fusion(s) B replays: same speed within noise "
            f"and no recorded property differs ({len(result.not_replayed)} other fusion(s) of A were not replayed)"
        )
    if result.comparable:
        return (
            f"the two runs are comparable: {len(result.pairs)} fusion(s) matched, every fusion and kernel "
            "has the same speed within noise, and no recorded property differs"
        )
    if not result.pairs:
        return "not comparable: nothing matched, the captures hold different fusions"
    verdicts = [p.timing.verdict for p in result.pairs]
    parts = [f"{verdicts.count(v)} {v.lower()}" for v in ("SLOWER", "FASTER", "AMBIGUOUS", "SAME") if v in verdicts]
    text = f"not comparable: {len(result.pairs)} matched fusion(s), B vs A: {', '.join(parts)}"
    if result.unmatched:
        text += f"; {len(result.unmatched)} unmatched"
    return text + f"; {len(result.findings)} finding(s)"


def _pair_lines(pair: FusionPair, width: int) -> list[str]:
    lines = [_row(pair.label, pair.timing, width)]
    show_kernels = pair.unmatched_kernels or (
        len(pair.kernels) > 1 and any(k.timing.verdict != "SAME" for k in pair.kernels)
    )
    if show_kernels:
        lines += [_row(f"  {k.normalized_name}", k.timing, width) for k in pair.kernels]
        lines += [
            f"    {k.normalized_name}: only in {k.side} ({_us(k.median_ns)} us median)" for k in pair.unmatched_kernels
        ]
    return lines


def _fusion_section(result: DiffResult) -> list[str]:
    if not result.pairs:
        return []
    width = min(max(len(p.label) for p in result.pairs) + 4, 60)
    header = (
        f"  {'fusion / kernel':<{width}}  {'A median us':>12}  {'B median us':>12}  {'B/A':>7}  "
        f"{'p-value':>8}  verdict (B vs A)"
    )
    lines = ["fusions", header]
    listed = result.pairs
    if len(result.pairs) > MAX_FUSION_ROWS:
        listed = tuple(p for p in result.pairs if p.timing.verdict != "SAME" or p.unmatched_kernels)
    for pair in listed:
        lines += _pair_lines(pair, width)
    if len(listed) < len(result.pairs):
        lines.append(f"  ... {len(result.pairs) - len(listed)} more fusion(s) SAME, not listed")
    return lines


def _finding_lines(f: Finding, rules_by_rank: dict[int, str]) -> list[str]:
    lines = [f"  {f.rank}. [{f.rule}, {f.role}] {f.title}  (explains {_us(f.explained_ns)} us)"]
    lines += [f"       {line}" for line in f.evidence]
    for heading, ranks in (("supported by", f.supported_by), ("follows from", f.caused_by)):
        if ranks:
            named = ", ".join(f"#{r} {rules_by_rank.get(r, '?')}" for r in ranks)
            lines.append(f"       {heading}: {named}")
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


def render_diff_text(result: DiffResult) -> str:
    """A short terminal summary: per fusion the medians (us), ratio and verdict of B relative to
    A; unmatched fusions; ranked findings with their evidence; warnings. Plain text, every line
    escaped (:func:`~fusiondiff.escape.printable`), since names and sources come from captures."""
    lines = [
        "fusiondiff diff",
        f"  {result.label_a}: {result.source_a or '?'}",
        f"  {result.label_b}: {result.source_b or '?'}",
        f"verdict: {_headline(result)}",
        "",
    ]
    section = _fusion_section(result)
    if section:
        lines += [*section, ""]
    if result.b_replays_subset:
        names = [f"{u.name} [{u.trace}]" if u.trace else u.name for u in result.not_replayed]
        lines += [f"not replayed by B ({len(result.not_replayed)} fusion(s) of A)", *_wrap(names, "  "), ""]
    elif result.unmatched:
        lines.append("unmatched fusions")
        for u in result.unmatched:
            where = f" [{u.trace}]" if u.trace else ""
            lines.append(f"  {u.side}: {u.name}{where} ({_us(u.median_ns)} us median): {u.reason}")
        lines.append("")
    if result.findings:
        lines.append("findings, ranked by the time they explain")
        rules_by_rank = {f.rank: f.rule for f in result.findings}
        for f in result.findings[:MAX_FINDINGS]:
            lines += _finding_lines(f, rules_by_rank)
        if len(result.findings) > MAX_FINDINGS:
            lines.append(f"  ... {len(result.findings) - MAX_FINDINGS} more finding(s) in the JSON record (--json)")
        lines.append("")
    if result.warnings:
        lines.append("warnings")
        lines += [f"  {w}" for w in result.warnings]
        lines.append("")
    return "\n".join(printable(line) for line in lines).rstrip("\n") + "\n"


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: write them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    return value


def render_diff_json(result: DiffResult) -> str:
    """The whole diff record as JSON (NaN and infinity as null), with ``comparable`` added."""
    data = _finite(to_jsonable(result))
    data["comparable"] = result.comparable
    return json.dumps(data, indent=1, allow_nan=False) + "\n"
