"""``fusiondiff report DIFF.json`` reads a diff record as it reads a capture: bounded, validated,
every reference of the diff into the captures checked, one-line errors naming the field.

The property test damages one value anywhere in a record written from the offset captures recorded
on the H200 (any type, any size, a position past the end or negative) and asks that the record is
either refused with a :class:`FusionDiffError` or rendered by every renderer; nothing else may
escape (no ``IndexError``, ``StopIteration``, ``AttributeError``, ``RecursionError``...).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fusiondiff.front.api import open_report
from fusiondiff.records.errors import FusionDiffError, ReportError
from fusiondiff.report import FORMATS, get_renderer
from fusiondiff.report.formats.record import dumps_diff_record

DATA = Path(__file__).parent.parent / "data" / "offset"
RECORD = json.loads(dumps_diff_record(open_report([DATA / "live.json", DATA / "replay_nvfuser.json"])))
"""The diff record of two captures recorded on the H200."""


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(data, dict):
        for key, value in data.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(data, list):
        for i, value in enumerate(data[:3]):
            found += _paths(value, (*prefix, i))
    return found


# the samples list repeats the captures' and is not read back: leave it out of the damage
PATHS = [p for p in _paths(RECORD) if p[0] != "samples"]
VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([-1, 0, 1, 99, 2**63])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=6,
)


def _damaged(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(RECORD))
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return data


def _render_all(path: Path) -> None:
    try:
        report = open_report([path])
    except FusionDiffError as exc:
        assert "\n" not in str(exc) and str(exc)
        return
    for name in FORMATS:
        assert isinstance(get_renderer(name).render(report), str)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(PATHS), value=VALUES)
def test_a_damaged_record_is_refused_in_one_line_or_rendered(tmp_path: Path, path: tuple[Any, ...], value: Any) -> None:
    file = tmp_path / "diff.json"
    file.write_text(json.dumps(_damaged(path, value)))
    _render_all(file)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (
            ("diff", "pairs", 0, "index_a"),
            99,
            r"diff\.pairs\[0\]\.index_a: 99 is not a fusion of capture A \(it holds 1\)",
        ),
        (("diff", "pairs", 0, "index_b"), -1, r"diff\.pairs\[0\]\.index_b: -1 is not a fusion of capture B"),
        (("diff", "pairs", 0, "key_a"), "forward/other/0", r"pairs\[0\]\.key_a: 'forward/other/0' is not the key"),
        (
            ("diff", "pairs", 0, "kernels", 0, "name_b"),
            "nowhere",
            r"kernels\[0\]: kernel 'nowhere' \(order \d+\) is not",
        ),
        (("sides",), [], r"\.sides: expected an object, found list"),
        # a key with a line break is quoted, so the refusal stays one line (found by the property test)
        (
            ("captures", "A", "environment", "nvfuser_env"),
            {"a\nb": 1},
            r"environment\.nvfuser_env\['a\\nb'\]: expected str, found 1$",
        ),
        (("sides", "A", "path"), 7, r"sides\.A\.path: expected a path or null, found 7"),
        (("diff", "pairs"), {}, r"diff\.pairs: expected a list, found dict"),
        # capture B is a delta against A: a wrong value inside it is named where B holds it
        (
            ("captures", "B", "~", "fusions", "[~]", "0", "~", "call_count"),
            {"=": -3},
            r"captures\.B\.fusions\[0\]\.call_count: -3",
        ),
        (("captures", "B"), [], r"captures\.B: expected a delta"),
        (
            ("captures", "B", "~", "fusions"),
            {"[~]": {"7": {"=": 1}}},
            r"captures\.B\.fusions: position '7' is not in a list of 1",
        ),
        (
            ("captures", "B", "~", "kind"),
            {"~": {}},
            r"captures\.B\.kind: an object's delta where capture A holds no object",
        ),
        (
            ("diff", "changes"),
            [{"path": "x", "a": [[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]], "b": 1, "category": "protocol"}],
            r"changes\[0\]\.a: nested deeper",
        ),
    ],
)
def test_a_wrong_reference_is_named(tmp_path: Path, path: tuple[Any, ...], value: Any, message: str) -> None:
    file = tmp_path / "diff.json"
    file.write_text(json.dumps(_damaged(path, value)))
    with pytest.raises(ReportError, match=message):
        open_report([file])
