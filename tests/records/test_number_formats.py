"""One number formatter (issue #41): nothing measured prints ``-``, integers as integers, a zero
time as ``0``, one unit per table column, also in the round trip's table."""

from __future__ import annotations

import math
import re
from pathlib import Path

from inprocess import fusiondiff

from fusiondiff.records.units import Column, duration, durations, number

DATA = Path(__file__).parent.parent / "data"


def test_nothing_measured_is_a_dash_and_a_zero_an_integer():
    assert duration(None) == duration(math.nan) == "-"
    assert duration(0) == duration(0, signed=True) == "0 us"
    assert durations(0, 5000.0, signed=[True]) == ["0 us", "5.00 us"]
    assert Column.of([1000.0, 0.0]).cell(0) == "0" and Column.of([1000.0]).cell(None) == "-"
    assert number(128254.0) == "128254" and number(-9.0) == "-9" and number(0.5) == "0.5"


def test_no_output_prints_a_zero_time_with_decimals():
    """``0.000 us`` came out of ``show`` and ``diff`` wherever a fusion launched no kernel or a time
    summed nothing; every recorded capture and pair, shown and diffed, now has none."""
    outputs = []
    for live in sorted(DATA.glob("*/live*.json")):
        outputs.append(_fusiondiff("show", live))
        replay = next(iter(sorted(live.parent.glob("replay*.json"))), None)
        if replay is not None:
            outputs.append(_fusiondiff("diff", live, replay))
    assert len(outputs) > 10
    for text in outputs:
        assert not re.search(r"(?<![0-9.])[+-]?0\.0+ (us|ms|s|ns)\b", text), text


def test_the_round_trip_table_has_one_unit(tmp_path):
    """The deep step's summary had its medians in us beside its gaps in ns."""
    import gzip

    from fusiondiff.roundtrip import render_summary, roundtrip

    from roundtrip.test_recorded_steps import recorded_replay

    live = tmp_path / "live.json"
    live.write_bytes(gzip.decompress((DATA / "roundtrip_deep" / "live.json.gz").read_bytes()))
    result = roundtrip(
        live, tmp_path / "rt", devices=[None], replay=recorded_replay(DATA / "roundtrip_deep" / "replay_one_gpu.json")
    )
    header = next(line for line in render_summary(result).splitlines() if line.lstrip().startswith("#"))
    units = re.findall(r"(?:live|replay|gap|unexpl\.) (ns|us|ms|s)\b", header)
    assert len(units) == 4 and len(set(units)) == 1, header


def _fusiondiff(*args: object) -> str:
    """What ``fusiondiff ARGS`` prints, run in this process (``tests/inprocess.py``)."""
    done = fusiondiff(*map(str, args))
    assert done.returncode in (0, 1), done.stderr
    return done.stdout
