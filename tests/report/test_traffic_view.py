"""How far each kernel is from its GPU's limit (issue #43) in ``show``, the Markdown and HTML reports,
the diff record and the notebook, on captures recorded on the H200.

No recorded capture has a measured peak yet (they were recorded before fusiondiff measured it):
where a test needs one, it sets it in the test (:func:`with_peak`), and says so; the figures it
checks against are :mod:`fusiondiff.records.traffic`'s own, computed on the same records.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from fusiondiff.diff import diff
from fusiondiff.front.cli import main
from fusiondiff.io.store import load_capture
from fusiondiff.records.environment import PeakBandwidth
from fusiondiff.records.errors import ReportError
from fusiondiff.records.model import Capture, TensorMeta
from fusiondiff.records.traffic import capture_traffic, furthest_from_peak
from fusiondiff.report import render
from fusiondiff.report.formats.html import capture_html
from fusiondiff.report.formats.record import build_diff_record, report_from_record
from fusiondiff.report.interface import DiffReport
from fusiondiff.report.text import render_capture_text
from fusiondiff.report.views.traffic_data import view_data
from fusiondiff.report.views.traffic_view import ABOVE_PEAK_NOTE, NOT_MEASURED, OLD_FILE, capture_view

from .test_renderers import _Tags

DATA = Path(__file__).parent.parent / "data"
SEED = DATA / "seed" / "live_forward.json"
SEED_REPLAY = DATA / "seed" / "replay_forward.json"
NVFUSER = DATA / "timers" / "seed_train_step" / "nvfuser.json"


def with_peak(capture: Capture, gbs: float = 4000.0) -> Capture:
    """``capture`` with a measured peak SET HERE, not recorded: no capture in tests/data has one."""
    peak = PeakBandwidth(gbs=gbs, best_gbs=gbs * 1.01, copy_bytes=1 << 30, copies=20, seconds=0.05)
    return dataclasses.replace(capture, environment=dataclasses.replace(capture.environment, peak_bandwidth=peak))


def kernel_line(text: str, fusion: str, kernel: str) -> str:
    """The line of ``kernel`` under the fusion named ``fusion`` in ``show``'s text."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(rf"  #\d+ {re.escape(fusion)} ", line))
    return next(line for line in lines[start + 1 :] if line.lstrip().startswith(kernel))


def section(text: str, title: str) -> list[str]:
    """The lines after the line starting with ``title`` up to the next line indented by two or less."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(title))
    body = []
    for line in lines[start + 1 :]:
        if not line.startswith("   "):
            break
        body.append(line)
    return body


def test_show_states_the_measured_peak_beside_the_datasheet_and_each_kernels_share():
    capture = with_peak(load_capture(SEED))  # the peak is set in the test, not recorded
    text = render_capture_text(capture)
    assert (
        "  peak 4000 GB/s measured (device-to-device copy (torch copy_), CUDA events; 1 GiB); datasheet 4800 GB/s"
        in text.splitlines()
    )
    swiglu = next(t for t in capture_traffic(capture.fusions, capture.environment) if "/nvFusion3/" in t.fusion)
    line = kernel_line(text, "nvFusion3", "nvfuser_pointwise_g0")
    assert f"{swiglu.percent_of_peak:.1f} % of peak" in line
    assert f"{swiglu.achieved_gbs:.0f} GB/s" in line
    assert f"{swiglu.bytes / 1e6:.1f} MB" in line  # without a width, the bytes fit
    # the rope fusion's three kernels, judged together, get one line of their own
    rope = next(t for t in capture_traffic(capture.fusions, capture.environment) if "/nvFusion1/" in t.fusion)
    together = kernel_line(text, "nvFusion1", "(3 kernels together)")
    assert f"{rope.percent_of_peak:.1f} % of peak" in together and "[b,c]" in together


def test_without_a_measured_peak_the_share_is_empty_and_one_sentence_says_why():
    capture = load_capture(SEED)
    assert capture.environment.peak_bandwidth is None
    text = render_capture_text(capture)
    assert text.count(OLD_FILE) == 1
    assert f"  % of peak: none, {OLD_FILE} (the datasheet's 4800 GB/s is not used in its place)" in text.splitlines()
    assert "% of peak" not in kernel_line(text, "nvFusion3", "nvfuser_pointwise_g0")
    assert "GB/s" in kernel_line(text, "nvFusion3", "nvfuser_pointwise_g0")
    assert "furthest from the limit" not in text  # no ranking without a peak
    # a capture that records its fusions' outputs came after the peak: it was left out, not old
    # (an output built here, on the seed's swiglu fusion)
    out = TensorMeta(index=0, kind="tensor", dtype="torch.bfloat16", shape=(4,), stride=(1,), device="cuda:0")
    newer = dataclasses.replace(capture, fusions=(dataclasses.replace(capture.fusions[3], outputs=(out,)),))
    assert (
        capture_view(newer).peak
        == f"% of peak: none, {NOT_MEASURED} (the datasheet's 4800 GB/s is not used in its place)"
    )


def test_approximations_are_marked_and_their_notes_listed_once():
    text = render_capture_text(with_peak(load_capture(SEED)))  # the peak is set in the test
    notes = section(text, "notes on the bandwidth figures")
    marks = dict(re.match(r"\s+\[(\S+)\] (.*)", line).groups() for line in notes if re.match(r"\s+\[", line))
    assert marks["a"].startswith("input 1: only the rows its gather can name")
    assert marks["b"].startswith("outputs not recorded")
    assert marks["c"].startswith("3 kernels judged together")
    assert "93 GB/s    2.1 MB [a,b]  grid" in kernel_line(text, "nvFusion0", "nvfuser_inner_persistent_g0")
    assert " MB [b]  grid" in kernel_line(text, "nvFusion2", "nvfuser_inner_persistent_g0")
    assert sum(1 for line in text.splitlines() if "3 kernels judged together" in line) == 1


def test_a_figure_above_the_peak_is_flagged_as_a_byte_count_too_high():
    capture = with_peak(load_capture(NVFUSER))  # the peak is set in the test
    text = render_capture_text(capture, width=None)
    above = [t for t in capture_traffic(capture.fusions, capture.environment) if t.above_peak]
    assert above and all(t.kernel_order == 0 and "/nvFusion" in t.fusion for t in above)
    assert " MB [c,!]  grid" in kernel_line(text, "nvFusion1", "nvfuser_resize_g1")
    assert " MB [c]  grid" in kernel_line(text, "nvFusion1", "nvfuser_resize_g2")
    assert f"    [!] {ABOVE_PEAK_NOTE}" in text.splitlines()


def test_furthest_from_the_limit_is_ranked_by_time_to_win_times_calls():
    capture = with_peak(load_capture(NVFUSER))  # the peak is set in the test
    traffic = capture_traffic(capture.fusions, capture.environment)
    expected = furthest_from_peak(traffic)[:5]
    rows = section(render_capture_text(capture, width=None), "furthest from the limit")[1:]
    position = {f.key: i for i, f in enumerate(capture.fusions)}
    assert [row.split()[0] for row in rows] == [f"#{position[t.fusion]}" for t in expected]
    assert float(rows[0].split()[2]) == pytest.approx(expected[0].headroom_ns / 1000, abs=0.01)
    # a fusion called often enough goes first (its call count set here)
    last = furthest_from_peak(traffic)[-1]
    calls = tuple(dataclasses.replace(f, call_count=10**6) if f.key == last.fusion else f for f in capture.fusions)
    rows = section(render_capture_text(dataclasses.replace(capture, fusions=calls), width=None), "furthest from")[1:]
    assert rows[0].split()[0] == f"#{position[last.fusion]}" and " 1000000 " in rows[0]


def test_nvfusers_own_figures_are_set_beside_ours_with_each_reason_once():
    capture = with_peak(load_capture(NVFUSER))  # the peak is set in the test
    text = render_capture_text(capture, width=None)
    intro = next(line for line in text.splitlines() if line.startswith("  nvFuser's own figures"))
    # true of every kernel nvFuser reported: said once, in the introduction
    assert "for every one, nvFuser's peak is 4814 GB/s" in intro and "reaches 4000 GB/s" in intro
    assert text.count("nvFuser's peak is 4814 GB/s") == 1
    embed = next(line for line in text.splitlines() if line.startswith("    #0 nvfuser_inner_persistent_g0"))
    assert embed.split()[2:4] == ["33.6", "MB"] and "1.12 GB" in embed and embed.endswith("(1) (2) (3)")
    reasons = {int(n): words for n, words in re.findall(r"^    \((\d+)\) (.*)$", text, re.MULTILINE)}
    assert reasons[1].startswith("nvFuser counts the gathered-from input 1 whole")
    assert reasons[3].startswith("nvFuser's share of its own peak is above 100 %, more than DRAM can deliver")
    # one reason for every kernel above 100 %, whatever its figure (782 %, 132 %, 130 %): said once
    assert sum("above 100 %" in words for words in reasons.values()) == 1
    assert len(set(reasons.values())) == len(reasons)  # each reason once
    assert re.search(r"^    \.\.\. \d+ more +\(2\)$", text, re.MULTILINE)  # a reason many share: a few listed


def test_show_fits_its_width_and_narrows_with_the_fusions(capsys: pytest.CaptureFixture[str]):
    capture = with_peak(load_capture(NVFUSER))  # the peak is set in the test
    text = render_capture_text(capture, width=100)
    assert max(map(len, text.splitlines())) <= 100
    assert main(["show", str(SEED), "--fusion", "nvFusion3"]) == 0
    out = capsys.readouterr().out
    assert OLD_FILE in out and "nvFusion1" not in out and "(3 kernels together)" not in out


def _report(a: Capture, b: Capture) -> DiffReport:
    return DiffReport(diff(a, b), a, b, "live_forward.json", "replay_forward.json")


def test_markdown_shows_each_side_against_its_own_peak():
    a = with_peak(load_capture(SEED), 4000.0)  # both peaks set in the test, not recorded
    b = with_peak(load_capture(SEED_REPLAY), 3500.0)
    text = render("md", _report(a, b))
    part = text[text.index("### How far each kernel is from its GPU's limit") :]
    assert "**A (live)**: peak 4000 GB/s measured" in part and "**B (replay)**: peak 3500 GB/s measured" in part
    for capture, label in ((a, "A (live)"), (b, "B (replay)")):
        side = part[part.index(f"**{label}**") :]
        side = side[side.index("<details>") :]  # the table of every kernel, after the ranked list
        swiglu = next(t for t in capture_traffic(capture.fusions, capture.environment) if "/nvFusion3/" in t.fusion)
        row = next(
            line
            for line in side.splitlines()
            if re.match(r"\| #3 nvFusion3( \\\[forward])?: nvfuser_pointwise_g0", line)
        )
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[2:] == [
            f"{swiglu.bytes / 1e6:.1f} MB",
            f"{swiglu.achieved_gbs:.0f}",
            f"{swiglu.percent_of_peak:.1f} %",
            "b",
        ]
    # with no peak on one side, that side says why and its share column is empty
    text = render("md", _report(a, load_capture(SEED_REPLAY)))
    assert f"**B (replay)**: % of peak: none, {OLD_FILE}" in text


def test_html_capture_and_report_carry_the_figures_and_stay_well_formed():
    capture = with_peak(load_capture(NVFUSER))  # the peak is set in the test
    page = capture_html(capture, "nvfuser.json")
    parser = _Tags()
    parser.feed(page)
    assert parser.errors == [] and parser.stack == []
    assert "<dt>DRAM bandwidth</dt><dd>peak 4000 GB/s measured" in page
    assert page.count('<td class="num above">') == sum(
        t.above_peak for t in capture_traffic(capture.fusions, capture.environment)
    )
    assert "Furthest from the limit" in page and "nvFuser&#x27;s peak is 4814 GB/s" in page
    report = render("html", _report(with_peak(load_capture(SEED)), load_capture(SEED_REPLAY)))
    parser = _Tags()
    parser.feed(report)
    assert parser.errors == [] and parser.stack == []
    assert "<h2>How far each kernel is from its GPU&#x27;s limit</h2>" in report
    assert report.count(OLD_FILE.replace("'", "&#x27;")) == 1  # B's side only


def test_the_diff_record_gives_each_sides_figures_back_from_its_captures():
    """The record writes no copy of the bytes (each figure once): read back, its captures give the
    same figures, peak and datasheet included."""
    a = with_peak(load_capture(SEED))  # the peak is set in the test
    report = _report(a, load_capture(SEED_REPLAY))
    record = json.loads(json.dumps(build_diff_record(report)))
    assert "traffic" not in record
    again = report_from_record(record)
    assert again.a.environment.peak_bandwidth == a.environment.peak_bandwidth
    traffic = {"A": view_data(again.a), "B": view_data(again.b)}
    assert traffic["A"]["peak"]["gbs"] == 4000.0 and traffic["A"]["datasheet_gbs"] == 4800.0
    assert traffic["B"]["peak"] is None and OLD_FILE in traffic["B"]["peak_words"]
    expected = capture_traffic(a.fusions, a.environment)
    assert [k["bytes"] for k in traffic["A"]["kernels"]] == [t.bytes for t in expected]
    assert [k["percent_of_peak"] for k in traffic["A"]["kernels"]] == pytest.approx(
        [t.percent_of_peak for t in expected]
    )
    assert all(k["percent_of_peak"] is None for k in traffic["B"]["kernels"])


def test_notebook_traffic_tables():
    pytest.importorskip("pandas")
    import fusiondiff.front.notebook as fdn

    capture = with_peak(load_capture(NVFUSER))  # the peak is set in the test
    table = fdn.CaptureView(capture).to_dataframe("traffic")
    expected = capture_traffic(capture.fusions, capture.environment)
    assert list(table.bytes) == [t.bytes for t in expected]
    assert list(table.percent_of_peak) == pytest.approx([t.percent_of_peak for t in expected])
    assert list(table.above_peak) == [t.above_peak for t in expected]
    assert table.nvfuser_bytes.iloc[0] == 1117839360
    both = fdn.diff(capture, load_capture(NVFUSER)).to_dataframe("traffic")
    assert list(both.side.value_counts().sort_index()) == [len(expected), len(expected)]
    assert both[both.side == "B"].percent_of_peak.isna().all()
    with pytest.raises(ReportError, match="traffic"):
        fdn.CaptureView(capture).to_dataframe("bytes")  # type: ignore[arg-type]


def test_the_environment_table_shows_each_sides_peak_and_marks_only_a_real_difference():
    from fusiondiff.records.environment import PeakBandwidth
    from fusiondiff.report.views.content import _peak_row

    h100 = PeakBandwidth(gbs=3007.3, best_gbs=3012.0, copy_bytes=1 << 30, copies=20, seconds=0.017)
    again = PeakBandwidth(gbs=2990.0, best_gbs=3009.0, copy_bytes=1 << 30, copies=20, seconds=0.017)
    h200 = PeakBandwidth(gbs=4100.0, best_gbs=4150.0, copy_bytes=1 << 30, copies=20, seconds=0.012)
    row = _peak_row("DRAM peak (measured)", None, h100)
    assert (row.a, row.b, row.differs) == ("not measured", "3007 GB/s (a 1024 MiB copy)", False)
    assert not _peak_row("p", h100, again).differs  # one GPU measured twice: 0.6 % apart
    assert _peak_row("p", h100, h200).differs
