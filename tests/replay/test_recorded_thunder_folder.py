"""The folders Thunder 0.2.6 itself wrote for a thunderfx program on the H100
(``tests/data/h100/thunder_report``, recorded by ``repro/thunder_report/record.sh``): read as
fusiondiff reads them before a replay, and the recorded diffs of their replays against the live
capture, whose input sits at a storage offset."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusiondiff.replay.thunder_folder import read_thunder_folder
from tests.inprocess import fusiondiff

RECORDED = Path(__file__).resolve().parent.parent / "data" / "h100" / "thunder_report"
THUNDER = RECORDED / "thunder"
REGION = "graph0_thunder_0_nvFusion0_forward"


def test_thunders_report_folder_is_one_region_and_seven_scripts_skipped_each_with_its_reason():
    folder = read_thunder_folder(str(THUNDER / "report"))
    assert [(r.region, Path(r.path).name) for r in folder.regions] == [(REGION, f"{REGION}_nvfuser_WallTime.py")]
    reasons = {Path(s.path).name: s.reason for s in folder.skipped}
    assert len(reasons) == 7 and sorted(reasons) == sorted(
        p.name for p in (THUNDER / "report").rglob("*.py") if p.name != f"{REGION}_nvfuser_WallTime.py"
    )
    assert "torch.compile" in reasons[f"{REGION}_torchcompile_KernelTime.py"]
    assert "inductor" in reasons["graph0_thunder_0_inductor_backend_WallTimeWithMemoryUsage.py"]


def test_thunders_printed_medians_are_read_from_its_stream_as_printed():
    figures = read_thunder_folder(str(THUNDER / "report"), str(THUNDER / "report.txt")).figures
    got = {(f.region, f.timer, f.executor): f.median_ns for f in figures}
    # report.txt: "WallTime ... torchcompile(117.608 us) and nvfuser(54.091 us)", "KernelTime ...
    # torchcompile(47.662 us) and nvfuser(52.193 us)", and the FX graph's lines
    assert got[(REGION, "WallTime", "nvfuser")] == pytest.approx(54_091)
    assert got[(REGION, "WallTime", "torchcompile")] == pytest.approx(117_608)
    assert got[(REGION, "KernelTime", "nvfuser")] == pytest.approx(52_193)
    assert got[(REGION, "KernelTime", "torchcompile")] == pytest.approx(47_662)
    assert got[("graph0_thunder_0 forward", "WallTimeWithMemoryUsage", "thunder")] == pytest.approx(290_215)


def test_the_repros_folder_is_the_regions_repro_and_the_graph_script_skipped():
    folder = read_thunder_folder(str(THUNDER / "repros"))
    assert [Path(r.path).name for r in folder.regions] == [f"{REGION}_repro_nvfuser.py"]
    assert [Path(s.path).name for s in folder.skipped] == ["graph0_thunder_0.py"]


@pytest.mark.parametrize("replay", ["replay_report.json", "replay_repros.json"])
def test_the_diff_names_the_offset_first_and_shows_thunders_figures_beside_fusiondiffs(replay):
    run = fusiondiff("diff", RECORDED / "live.json", RECORDED / replay)
    assert run.returncode == 1, run.stdout + run.stderr
    text = " ".join(run.stdout.split())
    assert f"nvFusion0 [forward] vs {REGION}:fusion0" in text  # paired by definition, named after the region
    assert "1. [storage_offset, cause]" in text and "storage offset 1 element(s) in A, 0 in B" in text
    if replay == "replay_report.json":  # replayed with --thunder-stream: Thunder's medians beside ours
        assert "Thunder's own figures beside fusiondiff's" in text
        assert "Thunder WallTime (nvfuser) 54.09 us" in text and "Thunder KernelTime (nvfuser) 52.19 us" in text
        assert "fusiondiff kernel 58.77 us 50.78 us" in text


@pytest.mark.parametrize("suffix", ["md", "html"])
def test_the_markdown_and_html_reports_show_thunders_figures_beside_fusiondiffs(tmp_path, suffix):
    out = tmp_path / f"report.{suffix}"
    run = fusiondiff("report", RECORDED / "live.json", RECORDED / "replay_report.json", "-o", out)
    assert run.returncode == 0, run.stderr
    page = out.read_text()
    assert "Thunder's own figures beside fusiondiff's" in page
    row = page[page.index("Thunder WallTime (nvfuser)") :][:120]
    assert "54.09 us" in row
    kernel = page[page.index("fusiondiff kernel", page.index("Thunder's own figures")) :][:160]
    assert "58.77 us" in kernel and "50.78 us" in kernel
    assert "torch.profiler" in page and "cold L2" in page  # what each timer measured


def test_a_report_without_thunders_figures_has_no_such_section(tmp_path):
    out = tmp_path / "report.md"
    assert fusiondiff("report", RECORDED / "live.json", RECORDED / "replay_repros.json", "-o", out).returncode == 0
    assert "Thunder's own figures" not in out.read_text()


def test_a_hostile_region_name_is_escaped_and_cut_in_every_format():
    """The recorded replay with its region renamed (in the test) to 100,000 characters of markup and
    terminal escapes, as a file name may carry: the section shows it escaped, and bounded."""
    import dataclasses

    from fusiondiff.diff import diff
    from fusiondiff.io.store import load_capture
    from fusiondiff.records.limits import TEXT_CHARS
    from fusiondiff.report import get_renderer
    from fusiondiff.report.interface import DiffReport

    live, replay = load_capture(RECORDED / "live.json"), load_capture(RECORDED / "replay_report.json")
    hostile = "<script>\x1b[31m" + "x" * 100_000
    fusions = tuple(dataclasses.replace(f, name=f.name.replace(REGION, hostile)) for f in replay.fusions)
    figures = tuple(dataclasses.replace(f, region=hostile) for f in replay.thunder_figures if f.region == REGION)
    replay = dataclasses.replace(replay, fusions=fusions, thunder_figures=figures)
    report = DiffReport(diff(live, replay), live, replay)
    for name, next_heading in (("md", "\n### "), ("html", "<h2>")):
        page = get_renderer(name).render(report)
        start = page.index("Thunder's own figures")
        end = page.find(next_heading, start)
        section = page[start : end if end >= 0 else len(page)]
        assert "\x1b" not in section and "Thunder WallTime (nvfuser)" in section
        assert section.count("<script>") == (section.count("\\<script>") if name == "md" else 0)  # escaped
        assert len(section) < 4 * TEXT_CHARS  # the name cut, not written 4 times whole
