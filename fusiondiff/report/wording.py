"""The words for findings that carry their evidence as data (:attr:`Finding.data`): every renderer
takes a finding's title and evidence lines from here, so one sentence is written in one place.

Findings written as text by their rule (the older ones) pass through unchanged. Units are chosen
here, when rendering: ns as us with two decimals, counts as integers.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from fusiondiff.diff.records import Evidence, Finding
from fusiondiff.report import environment_words

_LABELS = {
    "sms_used": "SMs used",
    "ctas": "CTAs",
    "waves": "waves on the busiest SM",
    "ctas_at_once": "CTAs at once on an SM (median over SMs)",
    "sms_used_min": "SMs used, fewest in a run",
    "runs_with_fewer_sms": "runs with fewer SMs than the other side's fewest",
    "first_start_max_ns_max": "latest first CTA start of an SM, latest in a run",
    "max_ctas_per_sm": "most CTAs run by one SM",
    "tail_ns": "tail (the last 10 % of CTAs)",
    "span_ns": "span (first CTA start to last end)",
    "first_start_max_ns": "latest first CTA start of an SM",
    "first_start_p50_ns": "median first CTA start of an SM",
    "cta_p10_ns": "CTA duration p10",
    "cta_p50_ns": "CTA duration median",
    "cta_p90_ns": "CTA duration p90",
    "cta_p99_ns": "CTA duration p99",
}


def value(evidence: Evidence, side: str) -> str:
    """One side's value with its unit (``4.35 us``, ``132``); ``-`` when not measured."""
    number = evidence.a if side == "A" else evidence.b
    if number is None or (isinstance(number, float) and math.isnan(number)):
        return "-"
    if evidence.unit == "ns":
        return f"{number / 1000:.2f} us"
    if evidence.unit == "fraction":
        return f"{100 * number:.1f} %"
    return f"{number:.0f}"


def evidence_lines(finding: Finding) -> tuple[str, ...]:
    """The finding's evidence, one line each."""
    if not finding.data:
        return finding.evidence
    if finding.rule in environment_words.TITLES:
        return environment_words.evidence_lines(finding)
    return tuple(f"{_LABELS.get(e.field, e.field)}: {value(e, 'A')} in A, {value(e, 'B')} in B" for e in finding.data)


def title(finding: Finding) -> str:
    """The finding's title: one sentence."""
    if not finding.data:
        return finding.title
    if finding.rule in environment_words.TITLES:
        return environment_words.title(finding)
    words = _TITLES.get(finding.rule)
    kernel = finding.kernels[0].rsplit("/", 1)[-1] if finding.kernels else ", ".join(finding.fusions)
    if words is None:
        return f"{kernel}: {finding.rule}"
    return f"{kernel}: {words({e.field: e for e in finding.data}, finding)}"


def _side(evidence: Evidence, larger: bool) -> tuple[str, str, str, str]:
    """(side with the larger value if ``larger`` else the smaller, its value, the other side, its value)."""
    a, b = evidence.a or 0.0, evidence.b or 0.0
    first = "A" if (a > b) == larger else "B"
    other = "B" if first == "A" else "A"
    return first, value(evidence, first), other, value(evidence, other)


def _fewer_sms(e: dict[str, Evidence], f: Finding) -> str:
    side, n, other, m = _side(e["sms_used_min"], larger=False)
    runs = value(e["runs_with_fewer_sms"], side)
    why = ": on the same grid, other work or a partition held SMs" if f.role == "setup" else ""
    return f"{side} ran its CTAs on fewer SMs in {runs} run(s) (as few as {n}, against at least {m} in {other}){why}"


def _starts_delayed(e: dict[str, Evidence], f: Finding) -> str:
    side, late, other, early = _side(e["first_start_max_ns_max"], larger=True)
    return f"an SM started its first CTA late in {side} ({late} after the first start, against {early} in {other}): SMs held by other work"


def _extra_wave(e: dict[str, Evidence], f: Finding) -> str:
    side, waves, other, fewer = _side(e["waves"], larger=True)
    res = e["ctas_at_once"]
    return (
        f"{side} needs {waves} waves on its busiest SM against {fewer} in {other} "
        f"(at most {value(res, side)} CTAs at once on an SM against {value(res, other)})"
    )


def _tail(e: dict[str, Evidence], f: Finding) -> str:
    side, tail, other, shorter = _side(e["tail_ns"], larger=True)
    return f"the last 10 % of CTAs took {tail} in {side} against {shorter} in {other}: a tail"


def _every_cta(e: dict[str, Evidence], f: Finding) -> str:
    side, slow, other, fast = _side(e["cta_p50_ns"], larger=True)
    return f"every CTA is slower in {side} (median {slow} against {fast} in {other}): the work itself takes longer"


def _few_ctas(e: dict[str, Evidence], f: Finding) -> str:
    side, slow, other, fast = _side(e["cta_p99_ns"], larger=True)
    return (
        f"a few CTAs are much slower in {side} (p99 {slow} against {fast} in {other}, the median alike): "
        "imbalance or contention"
    )


_TITLES: dict[str, Callable[[dict[str, Evidence], Finding], str]] = {
    "blocks_fewer_sms": _fewer_sms,
    "blocks_starts_delayed": _starts_delayed,
    "blocks_extra_wave": _extra_wave,
    "blocks_tail": _tail,
    "blocks_every_cta_slower": _every_cta,
    "blocks_few_ctas_slower": _few_ctas,
}
