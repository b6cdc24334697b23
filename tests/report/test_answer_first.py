"""The answer on the first lines of every format: each question's line, labelled ``kernel:``,
``host:``, ``fidelity:``, then where it came from; each line agreeing with its question's ledger
and gate, on recorded pairs; and the HTML's first screen at 1280x900 holding all three."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from fusiondiff.diff.records import DiffResult
from fusiondiff.front.api import open_report
from fusiondiff.records.units import duration
from fusiondiff.report import render
from fusiondiff.report.formats.html import diff_html_fragment
from fusiondiff.report.words.questions import answer_lines

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from inprocess import fusiondiff  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data"
PAIRS = {
    "offset_4096_nvfuser": ("h100/offset_thunderfx_4096/live.json", "h100/offset_thunderfx_4096/replay_nvfuser.json"),
    "offset_same": ("h100/offset_thunderfx/live.json", "h100/offset_thunderfx/replay_fusiondiff.json"),
    "roundtrip_deep": ("roundtrip_deep/live.json.gz", "roundtrip_deep/replay_one_gpu.json"),
    "host_decode": ("environment/host/live.json", "environment/host/rt/replay.json"),
    "seed_offset": ("offset/live.json", "offset/replay_nvfuser.json"),
    "cuda_source": ("cuda_source/live.json", "cuda_source/replay.json"),
    "llama3": ("fidelity/llama3/live.json", "fidelity/llama3/replay.json"),
    "contention": ("blocks/h200/contention/live.json", "blocks/h200/contention/replay.json"),
}
LABELS = ["kernel", "host", "fidelity"]


def _paths(name: str) -> list[Path]:
    return [DATA / p for p in PAIRS[name]]


def _unwrapped(text: str) -> list[str]:
    """The text's lines with each wrapped continuation (indented) joined to its line."""
    out: list[str] = []
    for line in text.splitlines():
        if line.startswith("    ") and out:
            out[-1] += " " + line.strip()
        else:
            out.append(line)
    return out


def _agrees(result: DiffResult) -> None:
    """Each question's line says what its ledger and gate say."""
    lines = {q: line for q, line, _ in answer_lines(result)}
    kernel, fidelity = result.outcome("kernel"), result.outcome("fidelity")
    assert (kernel == "passes") == lines["kernel"].startswith("same speed"), lines["kernel"]
    assert (kernel == "not measured") == ("not measured" in lines["kernel"].split(";")[0]), lines["kernel"]
    faithful = lines["fidelity"].startswith("B runs what A ran") and "--strict gates too" not in lines["fidelity"]
    assert (fidelity == "passes") == faithful, lines["fidelity"]
    for entry in result.ledger("fidelity").entries:  # each share said once, with its figure
        assert lines["fidelity"].count(duration(entry.explained_ns)) >= 1
    host = result.outcome("host")
    if host == "not measured":
        assert "not judged" in lines["host"] or "not measured" in lines["host"], lines["host"]
    if host == "fails":
        assert "keeps its GPU waiting" in lines["host"] or "B slower in" in lines["host"], lines["host"]


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_every_format_starts_with_the_three_answers_then_the_paths(name):
    report = open_report(_paths(name))
    result = report.result
    _agrees(result)
    expected = [f"{q}: {line}" for q, line, _ in answer_lines(result)]
    diff_text = _unwrapped(fusiondiff("diff", *_paths(name)).stdout)
    report_text = _unwrapped(render("text", report))
    for text in (diff_text, report_text):
        assert text[:3] == expected
        assert text[3].startswith(result.label_a + ": ") and text[4].startswith(result.label_b + ": ")
    markdown = render("md", report).splitlines()
    assert [line.split(":**")[0] for line in markdown[:3]] == ["**kernel", "**host", "**fidelity"]
    for page in (render("html", report), diff_html_fragment(report)):
        body = page[page.index('<div class="answers">') :]
        shown = re.findall(r'<div class="verdict (\w+)" data-question="(\w+)"><strong>', body)[:3]
        outcome_class = {"passes": "ok", "fails": "bad", "not measured": "unknown"}
        assert shown == [(outcome_class[result.outcome(q)], q) for q in LABELS]
        assert body.index("<strong>fidelity:</strong>") < body.index("<h1>")


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
MEASURE = """
<script>
const rects = [...document.querySelectorAll('.answers .verdict')].map(e => {
  const r = e.getBoundingClientRect(); return [e.dataset.question, r.top, r.bottom]; });
const out = document.createElement('pre');
out.id = 'fd-answers';
out.textContent = JSON.stringify(rects);
document.body.appendChild(out);
</script>
"""


def _answers_laid_out(page: str, width: int, height: int) -> list[list[object]]:
    """Where headless Chromium puts each answer line in a ``width`` x ``height`` window."""
    with tempfile.TemporaryDirectory() as scratch:
        probe = Path(scratch) / "probe.html"
        probe.write_text(page.replace("</body>", MEASURE + "</body>"))
        command = [
            str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={scratch}/profile",
            f"--window-size={width},{height}", "--dump-dom", probe.as_uri(),
        ]  # fmt: skip
        dom = subprocess.run(command, capture_output=True, text=True, timeout=120).stdout
    found = re.search(r'<pre id="fd-answers">([^<]*)</pre>', dom)
    assert found is not None, dom[-500:]
    return json.loads(found.group(1).replace("&quot;", '"'))


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (apt-get install chromium)")
@pytest.mark.parametrize("name", ["offset_4096_nvfuser", "llama3", "contention"])
def test_the_first_screen_at_1280_by_900_holds_the_three_answers(name):
    """The Verdict box repeated the kernel section; host time started at 500-2408 px and repro
    fidelity at 1007-2552 px. Now the three answers come first, each within the first screen."""
    page = render("html", open_report(_paths(name)))
    placed = _answers_laid_out(page, 1280, 900)
    assert [q for q, _, _ in placed] == LABELS
    assert all(0 <= top < bottom <= 900 for _, top, bottom in placed), placed


def test_the_readme_picture_is_made_by_a_committed_command_from_a_recorded_pair(tmp_path):
    """docs/images/make_report_png.py takes README's picture of the page it writes from a recorded
    pair: the pair is there, and that page opens with the three answers."""
    import importlib.util

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("make_report_png", root / "docs" / "images" / "make_report_png.py")
    assert spec is not None and spec.loader is not None
    made = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(made)
    assert all((root / p).is_file() for p in made.PAIR) and made.SIZE == (1280, 900)
    page = made.page(tmp_path).read_text()
    answers = [page.index(f"<strong>{q}:</strong>") for q in LABELS]
    assert answers == sorted(answers) and answers[-1] < page.index("<h1>")
    assert "docs/images/make_report_png.py" in (root / "README.md").read_text()
