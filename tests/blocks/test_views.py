"""The block level in every view, from the seed pair recorded on the H200 (tests/data/blocks/seed)."""

from __future__ import annotations

import collections
import dataclasses
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from inprocess import fusiondiff

from fusiondiff.front.api import open_report
from fusiondiff.io.store import load_capture, save_capture
from fusiondiff.io.timelines import load_arrays
from fusiondiff.records.block_stats import resident_per_sm
from fusiondiff.records.blocks import Refusal
from fusiondiff.report import render
from tests.blocks.conftest import BLOCKS

SEED = [str(BLOCKS / "seed" / "live.json"), str(BLOCKS / "seed" / "replay.json")]


def _fusiondiff(*args: str) -> subprocess.CompletedProcess[str]:
    """``fusiondiff ARGS`` run in this process (``tests/inprocess.py``)."""
    return fusiondiff(*args)


def _row(text: str, side: str) -> list[str]:
    """A side's cells in the table, its groups of columns read one after another (piped, the table
    is folded to 100 columns: issue #41)."""
    cells: list[str] = []
    for line in text[text.index("block level") :].splitlines()[1:]:
        if f"  {side}  " in line:
            words = line.split()
            cells += words[words.index(side) + 1 :]
    return cells


def test_the_terminal_diff_shows_each_sides_block_statistics():
    result = _fusiondiff("diff", *SEED)
    assert result.returncode == 1
    a, b = _row(result.stdout, "A"), _row(result.stdout, "B")
    # SMs, waves, most CTAs/SM, at once/SM, span, tail, start skew, latest SM start, CTA p50/p99, probe
    assert a[:6] == ["132", "9", "34", "4", "33.89", "3.33"] and a[8] == "2.66/6.11" and a[9:] == ["+32.8", "%"]
    assert b[:6] == ["132", "4", "34", "10", "20.86", "2.43"] and b[8] == "4.35/6.88"
    # the probe took 7 registers more on B's kernel, which the GPU's limits allow 10 CTAs per SM for
    assert " ".join(b[9:]) == "+12.4 %, 40->47 regs, 12->10 CTAs/SM"
    assert max(map(len, result.stdout.splitlines())) <= 100
    joined = " ".join(result.stdout.split())
    assert "nvfuser_inner_persistent_g0: A needs 9 waves on its busiest SM against 4 in B" in joined


def test_the_text_and_markdown_reports_carry_the_block_table():
    report = open_report(SEED)
    assert "block level (measured per CTA" in render("text", report)
    markdown = render("md", report)
    assert "### Block level" in markdown
    assert "| fusion0 / nvfuser_inner_persistent_g0 | A | 132 | 9 | 34 | 4 | 33.89 | 3.33 |" in markdown
    assert "|  | B | 132 | 4 | 34 | 10 | 20.86 | 2.43 |" in markdown
    assert "**nvfuser_inner_persistent_g0: A needs 9 waves" in markdown


def test_the_html_report_plots_occupancy_per_sm_and_cta_durations_for_both_sides():
    html = render("html", open_report(SEED))
    section = html[html.index("<h2>Block level, measured per CTA</h2>") :]
    assert section.count('<svg class="occ"') == 1 and section.count('<svg class="hist"') == 1
    occupancy = section[section.index('<svg class="occ"') : section.index("</svg>")]
    assert ">A: A (live) (run 1 of 1)<" in occupancy and ">B: B (replay) (run 1 of 1)<" in occupancy
    assert occupancy.count("<rect") > 132  # rows of SMs, run-length coded
    assert "4096 CTAs, median 2.66 us" in section and "4096 CTAs, median 4.35 us" in section


def _renamed(tmp_path: Path, name: str) -> list[str]:
    for side in ("live", "replay"):
        for suffix in (".json", ".timeline.safetensors"):
            shutil.copy(BLOCKS / "seed" / f"{side}{suffix}", tmp_path / f"{side}{suffix}")
    live = load_capture(tmp_path / "live.json")
    save_capture(
        dataclasses.replace(live, fusions=(dataclasses.replace(live.fusions[0], name=name),)), tmp_path / "live.json"
    )
    return [str(tmp_path / "live.json"), str(tmp_path / "replay.json")]


def test_names_from_a_capture_are_escaped_in_the_block_views(tmp_path):
    report = open_report(_renamed(tmp_path, "<img src=x>"))
    html = render("html", report)
    assert "<img src=x>" not in html and "&lt;img src=x&gt;" in html
    terminal = _fusiondiff("diff", *_renamed(tmp_path, "bad\x1b[2Jname"))
    assert "\x1b" not in terminal.stdout


def _trace(inputs: list[str], sm_tracks: bool = True) -> dict:
    from fusiondiff.report.formats.perfetto import PerfettoRenderer

    return json.loads(PerfettoRenderer(sm_tracks=sm_tracks).render(open_report(inputs)))


def test_perfetto_draws_sm_tracks_only_where_asked(tmp_path):
    """Issue #41: the per-SM tracks (a slice per CTA: 8192 here) are off by default; the kernel's
    slice still carries its block-level figures; ``--sm-tracks`` adds them."""
    plain = _trace(SEED, sm_tracks=False)
    assert {e["pid"] for e in plain["traceEvents"]} == {1, 2}  # the kernels and fusions of A and B
    kernel = next(e for e in plain["traceEvents"] if e.get("cat") == "kernel" and e["pid"] == 1)
    assert kernel["args"]["block_level"]["waves"] == 9
    assert "--sm-tracks" in plain["otherData"]["sm_tracks"]
    out = {}
    for flag in ([], ["--sm-tracks"]):
        path = tmp_path / f"t{len(flag)}.perfetto.json"
        assert _fusiondiff("report", *SEED, "-o", str(path), *flag).returncode == 0
        out[bool(flag)] = path.stat().st_size
    assert out[False] * 100 < out[True]  # 3.3 kB against 1.8 MB
    assert json.loads((tmp_path / "t1.perfetto.json").read_text()) == _trace(SEED)
    refused = _fusiondiff("report", *SEED, "--format", "md", "--sm-tracks")
    assert refused.returncode != 0 and "--sm-tracks is for the Perfetto trace" in refused.stderr


def test_perfetto_has_a_process_per_side_a_track_per_sm_and_a_slice_per_cta():
    trace = _trace(SEED)
    slices = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    measured = collections.Counter(e["pid"] for e in slices if e.get("cat") == "measured")
    assert measured == {5: 4096, 6: 4096}
    assert not [e for e in slices if e.get("cat") == "derived"]  # measured: no derived view for it
    names = {
        e["pid"]: e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"
    }
    assert names[5] == "A (live): SMs, measured per CTA" and names[6] == "B (replay): SMs, measured per CTA"
    threads = collections.Counter(
        e["pid"] for e in trace["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] in (5, 6)
    )
    # each SM gets as many lanes as it held CTAs at once (greedy lanes are optimal for intervals)
    for pid, path in ((5, SEED[0]), (6, SEED[1])):
        arrays = load_arrays(path, load_capture(path))[(0, 0)]
        held = resident_per_sm(arrays.start_ns[0], arrays.end_ns[0], arrays.sm[0])
        assert threads[pid] == sum(held.values())
    assert threads[5] == 132 * 4
    by_track = collections.defaultdict(list)
    for e in slices:
        if e.get("cat") == "measured":
            by_track[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    for spans in by_track.values():
        spans.sort()
        assert all(later[0] >= earlier[1] for earlier, later in zip(spans, spans[1:]))
    kernel = next(e for e in slices if e.get("cat") == "kernel" and e["pid"] == 1)
    assert kernel["args"]["block_level"]["waves"] == 9 and kernel["args"]["block_level"]["probe_overhead_pct"] == 32.8


def test_perfetto_keeps_the_derived_view_where_nothing_was_measured(tmp_path):
    inputs = _renamed(tmp_path, "fusion0")
    Path(inputs[1]).with_name("replay.timeline.safetensors").unlink()
    slices = [e for e in _trace(inputs)["traceEvents"] if e["ph"] == "X"]
    kinds = collections.Counter((e["pid"], e.get("cat")) for e in slices)
    assert kinds[(5, "measured")] == 4096 and kinds[(6, "measured")] == 0 and kinds[(4, "derived")] > 0


def test_a_refused_kernel_says_why_in_the_table(tmp_path):
    inputs = _renamed(tmp_path, "fusion0")
    live = load_capture(inputs[0])
    timeline = live.fusions[0].sm_timeline
    kernel = dataclasses.replace(
        timeline.kernels[0], runs=(), arrays=None, refusal=Refusal("overhead", "instrumented 32.8 % slower than plain")
    )
    refused = dataclasses.replace(
        live.fusions[0], sm_timeline=dataclasses.replace(timeline, kernels=(kernel,), file=None, sha256=None)
    )
    save_capture(dataclasses.replace(live, fusions=(refused,)), inputs[0])  # SYNTHETIC: the recorded kernel, refused
    text = _fusiondiff("diff", *inputs).stdout
    assert "A     refused: probe too slow (instrumented 32.8 % slower than plain)" in text
    assert "blocks_" not in text.split("block level")[0]
    # the HTML: the refused side one cell across the row, and one line above the fusion's plots
    html = render("html", open_report(inputs))
    assert '<td>A</td><td colspan="10">refused: probe too slow (instrumented 32.8 % slower than plain)</td>' in html
    assert (
        '<p class="meta refused">refused: nvfuser_inner_persistent_g0: A: refused: probe too slow '
        "(instrumented 32.8 % slower than plain)</p>" in html
    )


def test_the_per_sm_timelines_mark_waves_and_tail_on_one_time_axis():
    """Issue #41: A's strip above B's, one axis below both; a dashed line where each wave after the
    first starts on the busiest SM (A needs 9, B 4: 8 and 3 lines) and the tail shaded on each."""
    html = render("html", open_report(SEED))
    plot = html[html.index('<svg class="occ"') :]
    plot = plot[: plot.index("</svg>")]
    assert plot.index(">A: A (live)") < plot.index(">B: B (replay)")
    assert plot.count('class="wave"') == 8 + 3 and plot.count('class="tail"') == 2
    assert plot.count('text-anchor="middle">0</text>') == 1  # the time axis drawn once, under both strips


def test_a_notebook_gets_one_row_per_cta():
    pytest.importorskip("pandas")
    import fusiondiff.front.notebook as fdn

    ctas = fdn.diff(*SEED).to_dataframe("ctas")
    assert len(ctas) == 8192 and set(ctas.columns) >= {
        "side",
        "fusion",
        "kernel",
        "run",
        "cta",
        "sm",
        "start_us",
        "duration_us",
    }
    assert ctas.groupby("side").duration_us.median().round(2).to_dict() == {"A": 2.66, "B": 4.35}
    assert ctas.groupby("side").sm.nunique().to_dict() == {"A": 132, "B": 132}
    assert len(fdn.load(SEED[0]).to_dataframe("ctas")) == 4096
