"""Two causes holding one gap jointly are a tie: their words say "jointly", and the ranking lists
them in the causal model's declared order (upstream first), never by their rules' names."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from fusiondiff.diff.causes import declared_position
from fusiondiff.diff.core import diff
from fusiondiff.diff.ledger import recount
from fusiondiff.diff.records import DiffResult
from fusiondiff.io.store import load_capture
from fusiondiff.records.gates import FIDELITY, KERNEL
from fusiondiff.report.words.questions import fidelity_line
from fusiondiff.report.words.report_words import explains_text

DATA = Path(__file__).resolve().parents[1] / "data" / "h100" / "offset_thunderfx_4096"


def _tied() -> DiffResult:
    """offset_thunderfx_4096 against nvFuser's own repro (storage offset and constant precision
    share its 3.62 us gap), DERIVED: the constant precision finding relabelled ``index_value_range``,
    a root cause that, like the storage offset, nvFuser's scheduler reads, so the kernel variant and
    CUDA source found follow from both alike and nothing but a name could tell the two apart. The
    ledgers are counted again over the derived findings (:func:`recount`)."""
    result = diff(load_capture(DATA / "live.json"), load_capture(DATA / "replay_nvfuser.json"))
    assert {f.rule for f in result.findings if not f.caused_by} == {"storage_offset", "constant_precision"}
    derived = tuple(
        dataclasses.replace(f, rule="index_value_range") if f.rule == "constant_precision" else f
        for f in result.findings
    )
    return recount(dataclasses.replace(result, findings=derived), result.pairs)


def _roots(result: DiffResult) -> list[str]:
    return [f.rule for f in sorted(result.findings, key=lambda f: f.rank) if not f.caused_by]


def test_the_declared_order_is_not_the_names():
    """The case below can tell the two orders apart."""
    assert declared_position("storage_offset") < declared_position("index_value_range")
    assert sorted(["storage_offset", "index_value_range"]) == ["index_value_range", "storage_offset"]


def test_two_causes_of_equal_share_rank_in_the_declared_order_and_are_said_jointly():
    result = _tied()
    (entry,) = result.ledger(KERNEL).entries
    # inside the joint entry too the causes stand in the declared order, not their names'
    assert entry.causes == ("storage_offset", "index_value_range")
    (fidelity,) = result.ledger(FIDELITY).entries
    assert fidelity.causes == ("storage_offset", "index_value_range")
    assert entry.explained_ns == pytest.approx(3615)
    tied = {f.rule: f for f in result.findings if not f.caused_by}
    assert {rule: f.status for rule, f in tied.items()} == {"storage_offset": "joint", "index_value_range": "joint"}
    assert tied["storage_offset"].explained_ns == tied["index_value_range"].explained_ns == pytest.approx(3615)
    assert explains_text(tied["storage_offset"]) == "explains 3.62 us jointly with index_value_range"
    assert explains_text(tied["index_value_range"]) == "explains 3.62 us jointly with storage_offset"
    # by name, index_value_range would come first; the declared order lists the storage offset first
    assert _roots(result) == ["storage_offset", "index_value_range"]
    line = fidelity_line(result)
    assert "storage_offset and index_value_range jointly (3.62 us of kernel time)" in line
    assert line.count("3.62 us") == 1


def test_the_ranking_of_a_tie_does_not_depend_on_the_order_the_rules_ran_in():
    result = _tied()
    reversed_input = dataclasses.replace(result, findings=tuple(reversed(result.findings)))
    again = recount(reversed_input, result.pairs)
    assert _roots(again) == _roots(result)
    assert {f.rule: f.rank for f in again.findings} == {f.rule: f.rank for f in result.findings}
