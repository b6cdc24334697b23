"""Capture B in a diff record is its differences from capture A: applied to A, it gives B back
exactly, whatever the two JSON values are; a delta that does not fit A is refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusiondiff.front.api import open_report
from fusiondiff.records.codec import plain_data
from fusiondiff.records.errors import ReportError
from fusiondiff.report.formats.record_delta import apply, delta

DATA = Path(__file__).parent.parent / "data"

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=3), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(a=JSON, b=JSON)
def test_a_delta_applied_to_a_gives_b_back(a, b):
    change = json.loads(json.dumps(delta(a, b)))  # as written and read
    assert apply(a, change, "B") == b


@settings(max_examples=100, deadline=None)
@given(a=JSON)
def test_a_value_equal_to_a_has_an_empty_delta_where_it_is_an_object(a):
    wrapped = {"x": a}
    assert delta(wrapped, json.loads(json.dumps(wrapped))) == {"~": {}}


def test_the_recorded_replay_is_a_small_delta_of_its_live_capture():
    """The offset pair recorded on the H200: B shares A's definition text, inputs' layout and GPU."""
    report = open_report([DATA / "offset" / "live.json", DATA / "offset" / "replay_nvfuser.json"])
    a, b = (json.loads(json.dumps(plain_data(c))) for c in (report.a, report.b))  # as written and read
    change = delta(plain_data(report.a), plain_data(report.b))
    assert apply(a, json.loads(json.dumps(change)), "B") == b
    assert len(json.dumps(change)) < 0.85 * len(json.dumps(b))


@pytest.mark.parametrize(
    ("a", "change", "message"),
    [
        ({"x": 1}, {"~": {"x": {"~": {}}}}, r"B\.x: an object's delta where capture A holds no object"),
        ([1], {"[~]": {"3": {"=": 2}}}, r"B: position '3' is not in a list of 1"),
        ([1], {"[~]": {}, "len": 3}, r"B: position 1 is past capture A's list and not given"),
        ({}, {"=": 1, "~": {}}, r"B: expected a delta"),
        ({}, 5, r"B: expected a delta"),
    ],
)
def test_a_delta_that_does_not_fit_is_refused(a, change, message):
    with pytest.raises(ReportError, match=message):
        apply(a, change, "B")


@pytest.mark.parametrize("extra", [0, 1, -1])
def test_a_diff_record_gives_capture_b_back_whatever_its_fusions(extra):
    """Capture B is made a delta fusion by fusion; built here: B with as many fusions as A, one more
    (a new one written whole) or one fewer, and a warning A lacks."""
    import dataclasses

    from fusiondiff.diff.core import diff
    from fusiondiff.report.formats.record import build_diff_record, report_from_record
    from fusiondiff.report.interface import DiffReport

    report = open_report([DATA / "seed" / "live_forward.json", DATA / "seed" / "replay_forward.json"])
    fusions = (
        report.b.fusions + report.b.fusions[:1] if extra > 0 else report.b.fusions[: len(report.b.fusions) + extra]
    )
    b = dataclasses.replace(report.b, fusions=fusions, warnings=(*report.b.warnings, "built here"))
    record = json.loads(json.dumps(build_diff_record(DiffReport(diff(report.a, b), report.a, b))))
    assert report_from_record(record).b == b


@pytest.mark.parametrize(
    "pair", [("seed", "live_forward.json", "replay_forward.json"), ("zoo/seed_method", "live.json", "replay.json")]
)
def test_the_record_encoded_from_the_records_is_the_record_of_its_data(pair):
    """``encode_diff_record`` writes capture A and the diff from their records, without their data;
    its bytes are those of :func:`build_diff_record`'s data, and B holds no field neither file holds."""
    import msgspec

    from fusiondiff.report.formats.record import build_diff_record, encode_diff_record

    folder, a, b = pair
    report = open_report([DATA / folder / a, DATA / folder / b])
    encoded = encode_diff_record(report)
    assert bytes(encoded) == msgspec.json.encode(build_diff_record(report)) + b"\n"
    top = json.loads(encoded)["captures"]["B"]["~"]
    assert all(name in plain_data(report.a) or name in plain_data(report.b) for name in top)
