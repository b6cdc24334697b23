"""Thunder's printed timing lines read as figures (``fusiondiff.records.thunder``).

The lines are written here in the form Thunder 0.2.6's ``check_timing`` prints them (its f-strings,
its ``get_pretty_time_str``: three decimals in torch's ``select_unit`` unit); none was recorded.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fusiondiff.io.store import load_capture
from fusiondiff.records.thunder import ThunderFigure, merged_figures, parse_thunder_figures

DATA = Path(__file__).parent.parent / "data"

STREAM = """\
graph0_thunder_0 doesn't use CUDA, skip benchmark KernelTime
Benchmark WallTimeWithMemoryUsage ran successfully on **graph0_thunder_0 forward**: thunder(1.250 ms) , inductor_backend(998.100 us)
Max_allocated_memory: [graph0_thunder_0 forward] inductor_backend(1.000 MB); thunder(2.000 MB)

Benchmark WallTime ran successfully on **graph0_thunder_0_nvFusion0_forward**: torchcompile(12.345 us) , nvfuser(10.001 us)

Benchmark KernelTime for **graph0_thunder_0_nvFusion0_forward** requires investigation: torchcompile(950.000 ns) and nvfuser(2.500 s) is not close (rtol=0.0, atol=0.0)
The scripts are saved: graph0_thunder_0_nvFusion0_forward_nvfuser_KernelTime.py, graph0_thunder_0_nvFusion0_forward_torchcompile_KernelTime.py
"""


def test_each_line_gives_both_executors_figures_in_nanoseconds() -> None:
    got = [(f.region, f.timer, f.executor, f.median_ns) for f in parse_thunder_figures(STREAM, "report.txt")]
    assert got == [
        ("graph0_thunder_0 forward", "WallTimeWithMemoryUsage", "thunder", pytest.approx(1.25e6)),
        ("graph0_thunder_0 forward", "WallTimeWithMemoryUsage", "inductor_backend", pytest.approx(998100.0)),
        ("graph0_thunder_0_nvFusion0_forward", "WallTime", "torchcompile", pytest.approx(12345.0)),
        ("graph0_thunder_0_nvFusion0_forward", "WallTime", "nvfuser", pytest.approx(10001.0)),
        ("graph0_thunder_0_nvFusion0_forward", "KernelTime", "torchcompile", pytest.approx(950.0)),
        ("graph0_thunder_0_nvFusion0_forward", "KernelTime", "nvfuser", pytest.approx(2.5e9)),
    ]
    assert {f.source for f in parse_thunder_figures(STREAM, "report.txt")} == {"report.txt"}


def test_lines_that_are_not_timings_give_nothing() -> None:
    assert parse_thunder_figures("Benchmark WallTime on graph0 using nvfuser failed with exception boom\n") == ()
    assert parse_thunder_figures("Benchmark WallTime ran successfully on **x**: nvfuser(nan us) , a(1.000 us)") == ()


def test_the_first_source_wins_where_two_print_the_same_figure() -> None:
    stream = parse_thunder_figures(STREAM, "report.txt")
    script = parse_thunder_figures(STREAM.replace("10.001", "10.002"), "x.py's docstring")
    merged = merged_figures(stream, script)
    assert len(merged) == len(stream)
    assert {f.source for f in merged} == {"report.txt"}


def test_captures_written_before_the_field_read_with_none() -> None:
    capture = load_capture(DATA / "h100" / "offset_thunderfx_4096" / "replay_nvfuser.json")
    assert capture.thunder_figures == ()


def test_a_negative_figure_is_refused_by_the_codec() -> None:
    from fusiondiff.records.codec import decode
    from fusiondiff.records.errors import CaptureFormatError

    data = {"region": "r", "timer": "WallTime", "executor": "nvfuser", "median_ns": -1.0}
    with pytest.raises(CaptureFormatError, match="median_ns"):
        decode(data, ThunderFigure, "figure")
