"""The Markdown and HTML reports of hostile captures, rendered by a real Markdown renderer.

The captures recorded on the H200 with CUDA sources (``tests/data/cuda_source``: a definition diff
and CUDA source diffs) are given hostile text in every place a report shows it: fusion names,
warnings, what ran, GPU and version strings, the recording time, an ``NVFUSER_`` variable's name
and value, a line of the definition and of a CUDA source, and the capture files' names. The same
captures with that text made harmless (letters only, the same length) are the clean report. The
Markdown is rendered by markdown-it-py as GitHub-flavoured as it gets (raw HTML on, tables,
strikethrough, bare links found by linkify, domains included, which is stricter than GitHub): the
hostile report must hold exactly the tags the clean one holds (code spans aside: text that holds
backticks renders them as code), so no image, link, script, heading or ``<details>`` of its own.
"""

from __future__ import annotations

import json
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from fusiondiff.front.api import open_report
from fusiondiff.records.escape import printable
from fusiondiff.report import get_renderer
from fusiondiff.report.formats.md_text import code, fence, inline

DATA = Path(__file__).parent.parent / "data" / "cuda_source"

HOSTILE = {
    "html": '<img src=x onerror=alert(1)><a href="https://evil.example/">SAME</a><script>alert(1)</script>'
    "<details open><summary>forged</summary><h2>verdict</h2>",
    "markdown": "[verdict: SAME](https://evil.example/) ![i](https://evil.example/i.png) **b** _e_ ~~s~~ "
    "<https://evil.example> www.evil.example https://evil.example/x evil.example a@evil.example $x$ [^1] [r]",
    "backticks": "`` ` ``` ```` | cell | \\| `a|b` ``x <img src=x> ``` <img src=y>",
    "lines": "\n### Forged verdict: SAME\n\n<img src=x onerror=alert(1)>\n- item\r> quote\u2028# h\x1b[31m\x0c1. x\n",
    "entities": "&lt;img src=x onerror=alert(1)&gt; &#60;b&#62; \\<i\\> \\[x](y) &amp;",
    "starts": "# h",
}
"""Hostile texts by what they try: raw HTML, Markdown links and emphasis, backtick runs that
close spans and fences, line breaks that start blocks, entities and backslashes, a heading."""


def _clean(text: str) -> str:
    """``text`` with letters for every character but spaces and line breaks (as ``splitlines``
    counts them: the diffs cut definitions and sources there, so the clean report has as many
    lines)."""
    return "".join(ch if ch.isalnum() or ch == " " or len(f"a{ch}a".splitlines()) > 1 else "x" for ch in text)


def _captures(tmp: Path, text: str, file_text: str) -> list[Path]:
    """The recorded pair with ``text`` in every place a report shows, written to files whose names
    hold ``file_text``."""
    paths = []
    for side, name in (("A", "live.json"), ("B", "replay.json")):
        data = json.loads((DATA / name).read_text())
        fusion = data["fusions"][0]
        fusion["name"] += text
        fusion["warnings"] = [f"fusion warning {text}"]
        data["warnings"] = [f"capture warning {text}"]
        data["source"] = f"ran {text}"
        env = data["environment"]
        env["gpu_name"] += text
        env["nvfuser_version"] += text
        env["recorded_at"] = text
        if side == "A":
            fusion["definition"] += f"# {text}\n"
            kernel = sorted(fusion["cuda_sources"])[1]
            fusion["cuda_sources"][kernel] += f"\n// {text}\n"
        else:
            env["nvfuser_env"] = {f"NVFUSER_{text}": f"value {text}"}
        path = tmp / f"{side}{file_text}.json"
        path.write_text(json.dumps(data))
        paths.append(path)
    return paths


def _report(tmp: Path, text: str, file_text: str, fmt: str) -> str:
    return get_renderer(fmt).render(open_report(_captures(tmp, text, file_text)))


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: Counter[str] = Counter()
        self.attributes: set[tuple[str, str]] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        self.attributes |= {(tag, name) for name, _ in attrs}

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _tags(document: str) -> _Tags:
    parser = _Tags()
    parser.feed(document)
    parser.close()
    return parser


def _github(markdown: str) -> str:
    return MarkdownIt("gfm-like").render(markdown)


FILE_TEXT = "<img src=x onerror=alert(1)>`x`[l](y) www.evil.example"


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_markdown_report_has_only_the_clean_reports_tags(kind: str, tmp_path: Path) -> None:
    hostile_dir, clean_dir = tmp_path / "hostile", tmp_path / "clean"
    hostile_dir.mkdir(), clean_dir.mkdir()
    hostile = _tags(_github(_report(hostile_dir, HOSTILE[kind], FILE_TEXT, "md")))
    clean = _tags(_github(_report(clean_dir, _clean(HOSTILE[kind]), _clean(FILE_TEXT), "md")))
    assert clean.tags["table"] and clean.tags["details"] and clean.tags["pre"]  # the report's own parts
    assert hostile.tags - Counter({"code": hostile.tags["code"]}) == clean.tags - Counter({"code": clean.tags["code"]})
    assert hostile.attributes == clean.attributes
    assert not {"a", "img", "script"} & set(hostile.tags)


@pytest.mark.parametrize("kind", ["html", "markdown", "lines", "entities"])
def test_the_hostile_text_is_shown_not_dropped(kind: str, tmp_path: Path) -> None:
    shown = "".join(_tags(_github(_report(tmp_path, HOSTILE[kind], FILE_TEXT, "md"))).text)
    assert f"fusion warning {printable(HOSTILE[kind])}" in shown


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_html_report_has_only_the_clean_reports_tags(kind: str, tmp_path: Path) -> None:
    hostile_dir, clean_dir = tmp_path / "hostile", tmp_path / "clean"
    hostile_dir.mkdir(), clean_dir.mkdir()
    hostile = _tags(_report(hostile_dir, HOSTILE[kind], FILE_TEXT, "html"))
    clean = _tags(_report(clean_dir, _clean(HOSTILE[kind]), _clean(FILE_TEXT), "html"))
    assert hostile.tags == clean.tags and hostile.attributes == clean.attributes
    page = _report(hostile_dir, HOSTILE[kind], FILE_TEXT, "html")
    assert all(ch.isprintable() or ch == "\n" for ch in page)


@pytest.mark.parametrize(
    "text",
    ["a", "`", "a`b", "``x` y", "` x `", " lead", "|pipe|", "```", "x\ny", "\x1b[2J"],
)
def test_a_code_span_renders_the_text_literally(text: str) -> None:
    html = _github(f"see {code(text)} here")
    parser = _tags(html)
    assert parser.tags["code"] == 1 and set(parser.tags) == {"p", "code"}
    inner = html.split("<code>", 1)[1].split("</code>", 1)[0]
    assert inner.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">") == printable(text)


def test_a_fence_is_longer_than_any_backtick_run_in_its_lines() -> None:
    lines = ["a", "```", "````` x", "<img src=x>", "tab\there\rcr"]
    html = _github("\n".join(fence(lines, "diff")))
    assert _tags(html).tags == Counter({"pre": 1, "code": 1})
    assert "tab\there\\rcr" in html


def test_pipes_in_code_spans_stay_in_their_table_cell() -> None:
    row = f"| {inline(code('a|b<img src=x>'), table=True)} | {inline('c|d', table=True)} |"
    html = _github(f"| x | y |\n|---|---|\n{row}\n")
    assert _tags(html).tags["td"] == 2 and "img" not in _tags(html).tags
    assert "<code>a|b&lt;img src=x&gt;</code>" in html


def test_a_text_past_the_document_limit_is_cut_and_counted():
    """A recorded text made megabytes long is cut in the Markdown and HTML reports, and says how
    much it left out (the fuzz harness: a 10 MB nvFuser version written three times)."""
    from fusiondiff.records.limits import TEXT_CHARS
    from fusiondiff.report.formats.html_parts import escaped
    from fusiondiff.report.formats.md_text import inline

    long = "v" * (TEXT_CHARS + 123)
    for shown in (inline(long), inline(long, table=True), escaped(long)):
        assert shown.startswith("v" * TEXT_CHARS) and "123 more characters not shown" in shown
        assert len(shown) < TEXT_CHARS + 100
    assert inline("v" * TEXT_CHARS) == "v" * TEXT_CHARS == escaped("v" * TEXT_CHARS)
