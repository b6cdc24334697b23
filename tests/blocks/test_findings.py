"""Findings from the block level: on the seed pair recorded on the H200, on two recorded runs of one
kernel, and on SYNTHETIC variants of those runs (one statistic of side B changed, and B's plain
samples made slower where a rule needs a gap to explain), each labelled where it is made."""

from __future__ import annotations

import dataclasses

import pytest

from fusiondiff.diff import diff
from fusiondiff.diff import rules_blocks as rb
from fusiondiff.diff.findings import RULES
from fusiondiff.diff.records import Evidence
from fusiondiff.io.store import load_capture
from fusiondiff.records.blocks import BlockStats
from fusiondiff.records.model import Capture, Timing
from tests.blocks.conftest import BLOCKS


def _pair(folder: str, a: str, b: str) -> tuple[Capture, Capture]:
    return load_capture(BLOCKS / folder / a), load_capture(BLOCKS / folder / b)


def test_the_seed_kernel_variant_needs_more_waves_and_that_is_the_storage_offsets_evidence():
    result = diff(*_pair("seed", "live.json", "replay.json"))
    rules = [f.rule for f in result.findings]
    assert rules == ["storage_offset", "kernel_variant", "cuda_source", "blocks_extra_wave"]
    wave = result.findings[3]
    # it follows from the offset and from the variant and source the offset led to (the causal model)
    assert wave.role == "consequence" and wave.caused_by == (1, 2, 3) and wave.explained_ns == 0
    assert 4 in result.findings[0].supported_by
    assert wave.kernels == ("fusion0/nvfuser_inner_persistent_g0",)
    assert wave.title == "" and wave.evidence == ()
    assert wave.data[:2] == (Evidence("waves", 9.0, 4.0, "count"), Evidence("ctas_at_once", 4.0, 10.0, "count"))


def test_two_runs_of_one_kernel_give_no_block_finding():
    result = diff(*_pair("same_kernel", "a.json", "b.json"))
    assert result.findings == () and result.exit_code() == 0


def _changed(capture: Capture, slower: float = 1.0, **stats: float) -> Capture:
    """SYNTHETIC: ``capture``'s recorded record with some block statistics of every run replaced,
    and its plain samples multiplied by ``slower``."""
    fusion = capture.fusions[0]
    timeline = fusion.sm_timeline
    kernel = timeline.kernels[0]
    runs = tuple(dataclasses.replace(run, **stats) for run in kernel.runs)
    kernel = dataclasses.replace(kernel, runs=runs)
    kernels = tuple(
        dataclasses.replace(k, timing=Timing(tuple(s * slower for s in k.timing.samples_ns), k.timing.timer))
        for k in fusion.kernels
    )
    fusion = dataclasses.replace(
        fusion,
        kernels=kernels,
        timing=Timing(tuple(s * slower for s in fusion.timing.samples_ns), fusion.timing.timer),
        sm_timeline=dataclasses.replace(timeline, kernels=(kernel,)),
    )
    return dataclasses.replace(capture, fusions=(fusion,))


def _stats(capture: Capture) -> BlockStats:
    return capture.fusions[0].sm_timeline.kernels[0].runs[0]


CASES = {
    "blocks_fewer_sms": dict(sms_used=120),
    "blocks_starts_delayed": dict(first_start_max_ns=9000.0),
    "blocks_extra_wave": dict(waves=5),
    "blocks_tail": dict(tail_ns=6000.0),
    "blocks_every_cta_slower": dict(cta_p10_ns=3500.0, cta_p50_ns=5200.0, cta_p90_ns=7500.0),
    "blocks_few_ctas_slower": dict(cta_p99_ns=9500.0),
}
ROLES = {"blocks_fewer_sms": "setup", "blocks_starts_delayed": "setup"}


@pytest.mark.parametrize("rule", sorted(CASES))
def test_each_block_rule_fires_alone_on_the_slower_side(rule):
    a, b = _pair("same_kernel", "a.json", "b.json")
    b = _changed(b, slower=1.3, **CASES[rule])
    result = diff(a, b)
    blocks = [f for f in result.findings if f.rule.startswith("blocks_")]
    assert [f.rule for f in blocks] == [rule]
    finding = blocks[0]
    assert finding.role == ROLES.get(rule, "consequence")
    assert finding.data and all(e.unit in ("ns", "count") for e in finding.data)
    # the field the rule is about, measured on both sides
    changed = next(iter(CASES[rule]))
    assert any(e.field == changed and e.b == pytest.approx(CASES[rule][changed]) for e in finding.data)
    assert finding.fusions == ("fusion0",)


@pytest.mark.parametrize("rule", sorted(CASES))
def test_a_block_difference_on_the_faster_side_explains_nothing_and_is_not_reported(rule):
    # SYNTHETIC: B has the worse block statistic but A is the slower side
    a, b = _pair("same_kernel", "a.json", "b.json")
    a = _changed(a, slower=1.3)
    b = _changed(b, **CASES[rule])
    assert not [f for f in diff(a, b).findings if f.rule.startswith("blocks_")]


def test_starts_delayed_on_the_same_grid_is_the_machine_and_explains_the_gap():
    a, b = _pair("same_kernel", "a.json", "b.json")
    result = diff(a, _changed(b, slower=1.3, first_start_max_ns=9000.0))
    assert result.findings[0].rule == "blocks_starts_delayed" and result.findings[0].rank == 1
    assert result.findings[0].explained_ns > 0 and "unexplained" not in [f.rule for f in result.findings]
    assert [e.causes for e in result.ledger("kernel").entries] == [("blocks_starts_delayed",)]
    assert result.exit_code() == 1


def test_a_block_consequence_alone_says_how_and_the_pair_stays_unexplained():
    a, b = _pair("same_kernel", "a.json", "b.json")
    result = diff(a, _changed(b, slower=1.3, **CASES["blocks_every_cta_slower"]))
    rules = [f.rule for f in result.findings]
    assert rules == ["unexplained", "blocks_every_cta_slower"]
    first, second = result.findings
    assert first.explained_ns > 0 and second.explained_ns == 0  # the gap counted once: as unexplained
    assert result.ledger("kernel").explained_ns == 0 and result.ledger("kernel").unexplained_ns > 0


def test_stats_within_what_two_runs_differ_by_give_nothing():
    a, b = _pair("same_kernel", "a.json", "b.json")
    seen = _stats(b)
    nearly = dict(
        tail_ns=seen.tail_ns * 1.2, cta_p99_ns=seen.cta_p99_ns * 1.15, first_start_max_ns=seen.first_start_max_ns + 1500
    )
    assert not [f for f in diff(a, _changed(b, slower=1.3, **nearly)).findings if f.rule.startswith("blocks_")]


def test_every_block_rule_has_a_case_here():
    assert {r.__name__ for r in RULES if r.__module__ == rb.__name__} == set(CASES)
