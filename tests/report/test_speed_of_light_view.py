"""Each kernel against the two GPUs' measured peaks in the reports: the GPU's evidence lines and the
table under its finding, in the terminal summary, Markdown and HTML. The two-GPU pair is derived in
tests/diff/test_speed_of_light.py from the seed's recorded forward: its peaks, its other GPU and
B's times are set there, not recorded."""

from __future__ import annotations

import dataclasses

from fusiondiff.diff.core import diff
from fusiondiff.report.formats.diff_text import render_diff_text
from fusiondiff.report.formats.html import render_html
from fusiondiff.report.formats.markdown import render_markdown
from fusiondiff.report.interface import DiffReport
from fusiondiff.report.views.filters import Selection, select
from fusiondiff.report.views.speed_of_light_view import shown_rows

from diff.test_speed_of_light import H100, two_gpus, with_peak

SLOWER = "nvFusion3 [forward]/nvfuser_pointwise_g0"
FASTER = "nvFusion2 [forward]/nvfuser_inner_persistent_g0"


def report() -> DiffReport:
    a, b = two_gpus()
    return DiffReport(diff(a, b), a, b, "a.json", "b.json")


def _section(text: str, start: str, end: str) -> str:
    return text[text.index(start) : text.index(end, text.index(start))]


def test_the_terminal_summary_names_each_kernel_off_the_prediction_under_the_gpu_finding():
    text = render_diff_text(report().result, 100)
    gpu = _section(text, "  1. [gpu, setup] Another GPU", "  2. [")
    flat = " ".join(gpu.split())  # the sentences as one line, however the width wrapped them
    assert "measured DRAM peak: 4100 GB/s on A, 2900 GB/s on B" in flat
    assert "a memory-bound kernel takes 1.41x as long on B" in flat
    assert "2 of 13 kernel(s) judged against the peaks run off the prediction beyond the noise" in flat
    assert f"{SLOWER} runs at 64 % of peak on A and 49 % on B: B leaves more on the table" in flat
    assert "the peaks predict 126.1 us: +30 %" in flat
    assert f"{FASTER} runs at 45 % of peak on A and 59 % on B: A leaves more on the table" in flat
    assert "-25 %" in flat
    # the table follows the finding's evidence, every judged kernel a row, those beyond their floor starred
    table = gpu[gpu.index("each kernel against the measured peaks") :]
    assert table.count("% *") == 2
    for name in ("nvFusion0 [forward]/nvfuser_inner_persistent_g0", "nvFusion1 [forward]", SLOWER, FASTER):
        assert name in table
    starred = [line for line in table.splitlines() if line.rstrip().endswith(("%", "% *")) and " *" in line]
    assert any("+30 % *" in line for line in starred) and any("-25 % *" in line for line in starred)
    assert "outputs not recorded" in " ".join(table.split())  # the byte counts say what they leave out


def test_the_table_keeps_to_the_width():
    text = render_diff_text(report().result, 72)
    assert max(len(line) for line in text.splitlines()) <= 72
    assert "+30 % *" in text


def test_without_a_peak_on_b_one_line_says_why_and_no_table_follows():
    a, b = two_gpus()
    b = with_peak(b, None, **H100)
    text = render_diff_text(diff(a, b), None)
    gpu = _section(text, "  1. [gpu, setup] Another GPU", "  2. [")
    assert "       no measured peak on B: recorded before fusiondiff measured it\n" in gpu
    assert "of peak" not in gpu and "each kernel against" not in gpu


def test_markdown_and_html_show_the_table_under_the_gpu_finding():
    r = report()
    md = render_markdown(r)
    gpu = _section(md, "1. **Another GPU", "2. **")
    assert "   | fusion / kernel | A | B | B predicted | residual | floor | of peak A | of peak B |" in gpu
    assert "B leaves more on the table" in gpu and "A leaves more on the table" in gpu
    row = next(line for line in gpu.splitlines() if "nvfuser_pointwise_g0 |" in line and "nvFusion3" in line)
    assert row.rstrip(" |").split(" | ")[5:9] == ["+30 % \\*", "2 %", "64 %", "49 %"]
    html = render_html(r)
    gpu_html = _section(html, "Another GPU", "The clocks differ")
    assert '<table class="fdt"><thead><tr><th>fusion / kernel</th>' in gpu_html
    assert "<td>nvFusion3 [forward]/nvfuser_pointwise_g0</td>" in gpu_html
    assert "+30 % *" in gpu_html and "B leaves more on the table" in gpu_html


def test_a_narrowed_report_keeps_its_own_rows_and_a_long_table_keeps_those_off_the_prediction():
    r = report()
    narrowed = select(r, Selection(fusion="nvFusion3"))
    assert [row.fusion for row in shown_rows(narrowed.result)] == ["nvFusion3 [forward]"]
    # three rows of thirteen: the two beyond their floor, then the longest on A, in the pairs' order
    kept = shown_rows(r.result, limit=3)
    assert [row.fusion for row in kept] == ["nvFusion2 [forward]", "nvFusion3 [forward]", "nvFusion11 [forward]"]
    table = render_diff_text(dataclasses.replace(r.result, pairs=r.result.pairs[:4]), None)
    assert "nvFusion5" not in table[table.index("each kernel against") :]


def test_a_hostile_fusion_name_in_the_peaks_table_is_escaped_as_everywhere_else_in_the_page():
    from fusiondiff.report.views.speed_of_light_view import peaks_html

    a, b = two_gpus()
    hostile = "nvFusion3\x1b[31m<b>\u202e"  # a name as a crafted capture may carry it
    a, b = (
        dataclasses.replace(
            c, fusions=tuple(dataclasses.replace(f, name=hostile) if f.name == "nvFusion3" else f for f in c.fusions)
        )
        for c in (a, b)
    )
    page = peaks_html(diff(a, b))
    assert "\x1b" not in page and "\u202e" not in page and "<b>" not in page
    assert "nvFusion3\\x1b[31m&lt;b&gt;" in page
