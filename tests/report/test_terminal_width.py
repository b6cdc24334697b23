"""Output that fits a terminal (issue #41): ``show`` on the Qwen-sized capture printed 84 of 96 lines
over 100 columns, the widest 354; piped, no line of ``show`` or of the round trip's summary is now
wider than 100 columns, and nothing is lost by the wrapping."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

from fusiondiff.front.stdio import output_width
from fusiondiff.report.layout import fit, table

DATA = Path(__file__).parent.parent / "data"


def _piped(*args: object) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "fusiondiff", *map(str, args)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(
    "capture",
    [
        DATA / "roundtrip_deep" / "live.json.gz",
        DATA / "fidelity" / "qwen" / "live.json",
        DATA / "timers" / "seed_train_step" / "kineto.json",
    ],
    ids=["530 records", "qwen", "aten kernel names"],
)
def test_show_piped_has_no_line_over_100_columns(capture: Path):
    text = _piped("show", capture)
    wide = [line for line in text.splitlines() if len(line) > 100]
    assert not wide, wide[:3]
    # every kernel name is still there, whole once the wrapping is undone
    from fusiondiff.io.store import load_capture

    joined = " ".join(text.split())
    for f in load_capture(capture).fusions[:50]:
        for k in f.kernels:
            assert " ".join(k.normalized_name.split()) in joined, k.normalized_name


def test_the_round_trip_summary_fits_100_columns(tmp_path: Path):
    from fusiondiff.roundtrip import render_summary, roundtrip

    from roundtrip.test_recorded_steps import recorded_replay

    live = tmp_path / "live.json"
    live.write_bytes(gzip.decompress((DATA / "roundtrip_deep" / "live.json.gz").read_bytes()))
    result = roundtrip(
        live, tmp_path / "rt", devices=[None], replay=recorded_replay(DATA / "roundtrip_deep" / "replay_one_gpu.json")
    )
    for text in (render_summary(result, width=100), (tmp_path / "rt" / "summary.txt").read_text()):
        wide = [line for line in text.splitlines() if len(line) > 100]
        assert not wide, wide[:3]


def test_fit_breaks_between_fields_and_keeps_shapes_whole():
    line = "    inputs: " + ", ".join(["bfloat16[2, 512, 1024]@256B"] * 8)
    lines = fit(line, 60)
    assert all(len(part) <= 60 for part in lines) and lines[1].startswith("        bfloat16[")
    assert " ".join(" ".join(lines).split()) == " ".join(line.split())
    assert fit("short", 60) == ["short"] and fit("x" * 130, None) == ["x" * 130]
    assert all(len(part) <= 60 for part in fit("    " + "y" * 150, 60))


def test_output_width_is_100_when_not_a_terminal(monkeypatch):
    monkeypatch.setattr(sys, "stdout", open(__file__))  # a file: not a terminal
    try:
        assert output_width() == 100
    finally:
        sys.stdout.close()


def _unpacked(path: Path, tmp_path: Path) -> Path:
    if path.suffix != ".gz":
        return path
    out = tmp_path / path.stem
    out.write_bytes(gzip.decompress(path.read_bytes()))
    return out


@pytest.mark.parametrize(
    "a, b",
    [
        (DATA / "fidelity" / "qwen" / "live.json", DATA / "fidelity" / "qwen" / "replay.json"),
        (DATA / "roundtrip_deep" / "live.json.gz", DATA / "roundtrip_deep" / "replay_one_gpu.json"),
        (DATA / "environment" / "stream" / "live.json", DATA / "environment" / "stream" / "replay.json"),
        (DATA / "blocks" / "seed" / "live.json", DATA / "blocks" / "seed" / "replay.json"),
    ],
    ids=["qwen", "530 records", "conditions table", "block table"],
)
def test_diff_piped_has_no_line_over_100_columns(a: Path, b: Path, tmp_path: Path):
    done = subprocess.run(
        [sys.executable, "-m", "fusiondiff", "diff", _unpacked(a, tmp_path), b],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stderr
    wide = [line for line in done.stdout.splitlines() if len(line) > 100]
    assert not wide, wide[:3]
    joined = " ".join(done.stdout.split())
    # the legend and every fusion's label are all there once the wrapping is undone
    from fusiondiff.front.api import diff_files
    from fusiondiff.report.formats.diff_text import LEGEND, listed_pairs

    assert " ".join(LEGEND.split()) in joined
    for pair in listed_pairs(diff_files(_unpacked(a, tmp_path), b).pairs):
        assert pair.label in joined


def test_the_conditions_and_block_tables_fold_their_columns_losing_nothing(tmp_path: Path):
    """A table wider than the terminal is split into groups of columns, each repeating the fusion
    or kernel and the side: every header and every cell is still there."""
    from fusiondiff.front.api import open_report
    from fusiondiff.report.views.block_view import HEADER as BLOCK_HEADER
    from fusiondiff.report.views.block_view import block_rows, block_section, cells
    from fusiondiff.report.views.environment_view import HEADER, conditions_rows, conditions_text

    stream = open_report(
        [DATA / "environment" / "stream" / "live.json", DATA / "environment" / "stream" / "replay.json"]
    )
    text = conditions_text(stream, 100)
    assert max(map(len, text.splitlines())) <= 100 < max(map(len, conditions_text(stream).splitlines()))
    for row in conditions_rows(stream):
        for cell in row.cells:
            assert cell in text
    assert all(h in text for h in HEADER)
    seed = open_report([DATA / "blocks" / "seed" / "live.json", DATA / "blocks" / "seed" / "replay.json"])
    text = block_section(seed, 100)
    assert max(map(len, text.splitlines())) <= 100
    assert all(h in text for h in BLOCK_HEADER)
    for row in block_rows(seed):
        assert all(cell in text for cell in cells(row.timeline, row.probe))


def test_the_demo_fits_100_columns():
    text = _piped("demo", "--offline")
    wide = [line for line in text.splitlines() if len(line) > 100]
    assert not wide, wide[:3]
    assert "storage_offset" in text


def test_show_ends_with_a_legend_of_its_notation():
    """Issue #41: ``+1@2B``, ``@256B``, segments, iqr... explained where they are read, after the fusions."""
    text = _piped("show", DATA / "blocks" / "seed" / "live.json")
    legend = text[text.index("\nnotation\n") :]
    assert text.index("  #0 ") < text.index("\nnotation\n")
    for term in ("@256B", "+1@2B", "segments", "iqr", "grid, block", "smem", "regs", "called Nx"):
        assert f"  {term}" in legend or term in legend, term
    assert "+1@2B" in text[: text.index("\nnotation\n")]  # the seed's input at storage offset 1, explained below
    assert max(map(len, legend.splitlines())) <= 100


def test_a_table_whose_every_name_is_too_long_for_its_column_still_lays_out():
    # every name on a line of its own (the merged replay of a round trip names its fusions by their
    # log files: `show` of tests/data/h100/train_qwen3/replay.json raised TypeError here)
    long = "0008_backward_nvFusion8:fusion0 (10 kernels)"
    lines = table(("fusion", "us"), [(long, "55.48"), (long + "x", "1.00")], width=60, keys=1)
    assert lines[1].strip() == long and "55.48" in lines[2]
    assert all(len(line) <= 60 for line in lines)
