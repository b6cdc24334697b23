"""The words for findings: every rule's finding carries its evidence as data (:attr:`Finding.data`)
and every renderer takes a finding's title and evidence lines from here, so one sentence is
written in one place. The block level's words are here; the other rules' are in the module of
their kind, which this one hands them to: :mod:`~fusiondiff.report.words.environment_words`,
:mod:`~fusiondiff.report.words.setup_words`, :mod:`~fusiondiff.report.words.input_words` (inputs, failures)
and :mod:`~fusiondiff.report.words.fusion_words` (the fusion, nvFuser's consequences, ``unexplained``).

A finding read from a diff record written before findings were data (schema 1) holds its
sentences: they pass through unchanged. Units are chosen here, when rendering: ns as us with two
decimals, counts as integers.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

from fusiondiff.diff.records import DiffResult, Evidence, Finding
from fusiondiff.report.words import environment_words, fusion_words, input_words, setup_words
from fusiondiff.report.words.shown import show

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
    number = evidence.on(side)
    if number is None or (isinstance(number, float) and math.isnan(number)):
        return "-"
    if evidence.unit == "ns":
        return f"{number / 1000:.2f} us"
    if evidence.unit == "fraction":
        return f"{100 * number:.1f} %"
    return f"{number:.0f}"


_WORDS: dict[str, Callable[[Finding], tuple[str, list[str]]]] = {
    **setup_words.WORDS,
    **input_words.WORDS,
    **fusion_words.WORDS,
}
"""The title and evidence lines of every rule worded outside this module and environment_words."""


def _written(finding: Finding) -> bool:
    """A finding from a schema 1 diff record: its rule wrote its sentences."""
    return bool(finding.title or finding.evidence) and not finding.data


def _words(finding: Finding) -> tuple[str, list[str]]:
    """The title and lines of a rule worded in its kind's module. Evidence that does not have the
    shape its rule gives it (a diff record edited by hand, or written by another version) is shown
    piece by piece instead of refused: the finding's rank and role still stand."""
    try:
        return _WORDS[finding.rule](finding)
    except (KeyError, StopIteration, IndexError, TypeError, ValueError, AttributeError):
        lines = [
            f"{e.subject + ': ' if e.subject else ''}{e.field}: {show(e.a)} in A, {show(e.b)} in B"
            for e in finding.data
        ]
        return f"{', '.join(finding.fusions)}: {finding.rule}", lines


def worded(result: DiffResult) -> DiffResult:
    """``result`` with each finding's ``title`` and ``evidence`` written from its data, for the
    JSON a diff writes: a reader of the JSON gets the sentences the reports show beside the data
    (a later ``fusiondiff report`` words the data again, never these)."""
    findings = tuple(
        dataclasses.replace(f, title=title(f), evidence=evidence_lines(f)) if f.data else f for f in result.findings
    )
    return dataclasses.replace(result, findings=findings)


def evidence_lines(finding: Finding) -> tuple[str, ...]:
    """The finding's evidence, one line each."""
    if _written(finding):
        return finding.evidence
    if finding.rule in _WORDS:
        return tuple(_words(finding)[1])
    if finding.rule in environment_words.TITLES:
        return environment_words.evidence_lines(finding)
    return tuple(f"{_LABELS.get(e.field, e.field)}: {value(e, 'A')} in A, {value(e, 'B')} in B" for e in finding.data)


def title(finding: Finding) -> str:
    """The finding's title: one sentence."""
    if _written(finding):
        return finding.title
    if finding.rule in _WORDS:
        return _words(finding)[0]
    if finding.rule in environment_words.TITLES:
        return environment_words.title(finding)
    words = _TITLES.get(finding.rule)
    kernel = finding.kernels[0].rsplit("/", 1)[-1] if finding.kernels else ", ".join(finding.fusions)
    if words is None:
        return f"{kernel}: {finding.rule}"
    return f"{kernel}: {words({e.field: e for e in finding.data}, finding)}"


def _side(evidence: Evidence, larger: bool) -> tuple[str, str, str, str]:
    """(side with the larger value if ``larger`` else the smaller, its value, the other side, its value)."""
    a, b = evidence.on("A") or 0.0, evidence.on("B") or 0.0
    first = "A" if (a > b) == larger else "B"
    other = "B" if first == "A" else "A"
    return first, value(evidence, first), other, value(evidence, other)


def _fewer_sms(e: dict[str, Evidence], f: Finding) -> str:
    side, n, other, m = _side(e["sms_used_min"], larger=False)
    runs = value(e["runs_with_fewer_sms"], side)
    same_grid = e["ctas"].a == e["ctas"].b
    why = ": on the same grid, other work or a partition held SMs" if same_grid else ""
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
