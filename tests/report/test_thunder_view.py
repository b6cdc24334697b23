"""Thunder's own figures beside fusiondiff's in the diff report, and the pairing of a Thunder
folder's replays with the live fusions.

The captures are the H100 recording of ``tests/data/h100/offset_thunderfx_4096`` (a thunderfx
LayerNorm live at storage offset 1, and nvFuser's repro replayed). The replay is modified in the
test, not recorded: its fusion renamed as a replay of Thunder's folder names it, and Thunder's
figures (values written here) added as ``fusiondiff replay DIR --thunder-stream`` adds them.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from inprocess import fusiondiff

from fusiondiff.diff.core import diff
from fusiondiff.diff.match import match_fusions
from fusiondiff.io.store import load_capture, save_capture
from fusiondiff.records.model import Capture
from fusiondiff.records.thunder import ThunderFigure
from fusiondiff.records.units import duration
from fusiondiff.report.interface import DiffReport
from fusiondiff.report.terminal import render_diff_terminal
from fusiondiff.report.views.thunder_view import thunder_rows, thunder_text

REPO = Path(__file__).parent.parent.parent
PAIR = REPO / "tests" / "data" / "h100" / "offset_thunderfx_4096"
REGION = "graph0_thunder_0_nvFusion0_forward"
FIGURES = (
    ThunderFigure(REGION, "WallTime", "torchcompile", 71204.0, "report.txt"),
    ThunderFigure(REGION, "WallTime", "nvfuser", 66018.0, "report.txt"),
    ThunderFigure(REGION, "KernelTime", "nvfuser", 60113.0, "report.txt"),
)


def _thunder_replay() -> Capture:
    """The recorded replay as a replay of Thunder's folder would be (modified here, see above)."""
    b = load_capture(PAIR / "replay_nvfuser.json")
    fusion = dataclasses.replace(b.fusions[0], name=f"{REGION}:fusion0")
    return dataclasses.replace(b, fusions=(fusion,), thunder_figures=FIGURES)


def test_thunder_figures_sit_beside_fusiondiffs_for_the_region() -> None:
    a, b = load_capture(PAIR / "live.json"), _thunder_replay()
    report = DiffReport(diff(a, b), a, b)
    rows = list(thunder_rows(report))
    pair = report.result.pairs[0]
    assert rows[:3] == [
        (REGION, "Thunder WallTime (torchcompile)", "", duration(71204.0)),
        ("", "Thunder WallTime (nvfuser)", "", duration(66018.0)),
        ("", "Thunder KernelTime (nvfuser)", "", duration(60113.0)),
    ]
    assert rows[3] == (
        "",
        "fusiondiff kernel",
        duration(pair.timing.median_a_ns),
        duration(pair.timing.median_b_ns),
    )
    text = thunder_text(report)
    assert "WallTime: wall time per call of fd.execute called back to back" in text
    assert "KernelTime: the kernels' device time per call from torch.profiler" in text
    assert "L2 flushed before each sample (cold L2)" in text
    assert text in render_diff_terminal(report)


def test_no_section_without_thunder_figures_or_without_a_paired_region() -> None:
    a, b = load_capture(PAIR / "live.json"), load_capture(PAIR / "replay_nvfuser.json")
    assert thunder_text(DiffReport(diff(a, b), a, b)) == ""
    other = dataclasses.replace(b, thunder_figures=FIGURES)  # figures, but no fusion named after the region
    assert thunder_text(DiffReport(diff(a, other), a, other)) == ""


def test_the_region_names_its_live_fusion_among_equal_definitions() -> None:
    """Two live regions of one definition (nvFusion0 and nvFusion1, as repeated layers make) and
    their replays in the other order: each pairs with its region, not by position."""
    live = load_capture(PAIR / "live.json")
    one = live.fusions[0]
    a = (one, dataclasses.replace(one, name="nvFusion1"))
    replayed = _thunder_replay().fusions[0]
    b = (
        dataclasses.replace(replayed, name="graph0_thunder_0_nvFusion1_forward:fusion0"),
        dataclasses.replace(replayed, name="graph0_thunder_0_nvFusion0_forward:fusion0"),
    )
    matches, _ = match_fusions(a, b)
    assert [(m.index_a, m.index_b, m.by_order) for m in matches] == [(0, 1, False), (1, 0, False)]


def test_the_diff_command_prints_the_section(tmp_path: Path) -> None:
    save_capture(_thunder_replay(), tmp_path / "replay.json")
    result = fusiondiff("diff", PAIR / "live.json", tmp_path / "replay.json")
    assert "Thunder's own figures beside fusiondiff's" in result.stdout
    assert f"{duration(66018.0)}" in result.stdout
