"""The HTML report as a new user sees it (issue #23, section 2, item 11): written by the real command
line, then laid out by headless Chromium at 1280 and 1920 px where it is installed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from inprocess import fusiondiff

DATA = Path(__file__).parent.parent / "data"
LLAMA3 = (DATA / "fidelity" / "llama3" / "live.json", DATA / "fidelity" / "llama3" / "replay.json")
TIMERS = (DATA / "timers" / "seed_train_step" / "kineto.json", DATA / "timers" / "seed_train_step" / "nvfuser.json")
"""Two timers' captures of one training step: ATen kernels with long C++ names among the rows."""
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
MEASURE = """
<script>
const boxes = [...document.querySelectorAll('.tw')].map(b => [b.scrollWidth, b.clientWidth]);
const out = document.createElement('pre');
out.id = 'fd-layout';
out.textContent = JSON.stringify({page: [document.documentElement.scrollWidth, window.innerWidth], boxes});
document.body.appendChild(out);
</script>
"""
"""Appended to a copy of the page: what overflows, measured by the browser that laid it out."""


def html_report(inputs: tuple[Path, Path], out: Path) -> str:
    """``fusiondiff report A B -o OUT`` (run in this process: the page is what is tested), the page."""
    result = fusiondiff("report", *inputs, "-o", out)
    assert result.returncode in (0, 1), result.stderr
    return out.read_text()


def test_the_html_tables_scroll_in_their_box_and_the_what_ran_card_is_short(tmp_path):
    """Item 11: the fusion table's first column was ``nowrap`` with no ``overflow-x``, so it pushed
    the samples and launch columns off the page; the "what ran" card listed all 26 scripts."""
    page = html_report(LLAMA3, tmp_path / "r.html")
    assert ".fd .tw { max-width: 100%; overflow-x: auto; }" in page
    assert "timings td:first-child { white-space: nowrap; }" not in page
    tables = page.count("<table ")
    assert tables and page.count('<div class="tw"><table ') == tables, "every table in a scrolling box"
    ran = re.search(r"<dt>what ran</dt><dd>26 scripts: ([^<]*)</dd>", page)
    assert ran is not None and ran.group(1).endswith("llama3/repros/backward_nvFusion15.py and 23 more")


def layout(page: str, width: int) -> dict:
    """The page laid out by headless Chromium at ``width`` px: its width, and each table box's."""
    with tempfile.TemporaryDirectory() as scratch:
        probe = Path(scratch) / "probe.html"
        probe.write_text(page.replace("</body>", MEASURE + "</body>"))
        command = [
            str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={scratch}/profile",
            f"--window-size={width},2000", "--dump-dom", probe.as_uri(),
        ]  # fmt: skip
        dom = subprocess.run(command, capture_output=True, text=True, timeout=120).stdout
    found = re.search(r'<pre id="fd-layout">([^<]*)</pre>', dom)
    assert found is not None, dom[-500:]
    return json.loads(found.group(1).replace("&quot;", '"'))


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (apt-get install chromium)")
@pytest.mark.parametrize("width", [1280, 1920])
@pytest.mark.parametrize("inputs", [LLAMA3, TIMERS], ids=["llama3", "timers"])
def test_every_column_of_the_html_report_fits_the_page(tmp_path, inputs, width):
    """Item 11, looked at: at 1280 and 1920 px the page is no wider than the window and no table is
    wider than its box (the samples and launch columns are on screen)."""
    measured = layout(html_report(inputs, tmp_path / "r.html"), width)
    page, window = measured["page"]
    assert page <= window, measured
    assert measured["boxes"] and all(scroll <= client for scroll, client in measured["boxes"]), measured


BLOCKS = DATA / "blocks"


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (apt-get install chromium)")
@pytest.mark.parametrize(
    "inputs",
    [
        (BLOCKS / "seed" / "live.json", BLOCKS / "seed" / "replay.json"),
        (BLOCKS / "h200" / "contention" / "live.json", BLOCKS / "h200" / "contention" / "replay.json"),
    ],
    ids=["seed", "contention"],
)
def test_the_block_level_fits_a_1280_px_window(tmp_path, inputs):
    """Issue #41: block-level data, its table in a box that scrolls sideways and its per-SM plots
    scaled to the page: the document is no wider than the 1280 px window."""
    html = html_report(inputs, tmp_path / "r.html")
    section = html[html.index("<h2>Block level") :]
    assert section.index('<div class="tw"><table class="fdt blocks">') < section.index("</table>")
    measured = layout(html, 1280)
    page, window = measured["page"]
    assert page <= 1280 and page <= window, measured
