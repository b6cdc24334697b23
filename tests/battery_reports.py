"""Issue #24's cases of the battery for reports that others open (``markdown``): the Markdown
report of hostile captures (raw HTML, links, backtick runs in names, versions, warnings,
definitions, CUDA sources, ``NVFUSER_`` names and file names) holds no tag and no link of the
capture's making, as markdown-it-py renders it (GitHub-flavoured, bare links found); Markdown and
HTML printed to a terminal hold no control character. The diff-record reader and text no encoder
takes are in ``tests/battery_records.py``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from battery import RECORDED_DATA, Case, Run, both, put, shows

REPORT_MD = "report {other} {cap} --format md"
REPORT_HTML = "report {other} {cap} --format html"
KERNEL = RECORDED_DATA["fusions"][0]["kernels"][1]["name"]
"""The recorded fusion's nvFuser kernel (the other one is an ATen fill)."""
HTML_ATTACK = '<img src=x onerror=alert(1)><a href="https://evil.example/">SAME</a><script>alert(1)</script>'
LINK_ATTACK = "[verdict: SAME](https://evil.example/) ![i](https://evil.example/i.png) www.evil.example a@evil.example"
TERMINAL = "nv\x1b[2J\x1b]0;owned\x07\x9b31m\u202eevil\x08"
"""ESC (a CSI), OSC ending in BEL, a C1 CSI, a bidi override and a backspace."""

_OWN_HTML = re.compile(r"<details( open)?><summary>[^<>]*</summary>\n?|</details>\n?|</?sub>")
"""The only raw HTML the Markdown report writes itself."""


def md_inert(where: str | None = None) -> Callable[[Run], None]:
    """The Markdown on stdout (or in the file ``where``), rendered by markdown-it-py, holds no raw
    HTML but the report's own, no link, no image, one ``##`` heading and only ``###`` sections."""

    def check(run: Run) -> None:
        markdown_it = pytest.importorskip("markdown_it")
        text = run.stdout if where is None else (run.tmp / where).read_text()
        tokens = markdown_it.MarkdownIt("gfm-like").parse(text)
        seen = [t for t in tokens if t.children] + tokens
        flat = [c for t in seen for c in (t.children or [t])]
        html = [t.content for t in flat if t.type in ("html_block", "html_inline")]
        assert all(_OWN_HTML.fullmatch(h) for h in html), [h for h in html if not _OWN_HTML.fullmatch(h)]
        assert not [t for t in flat if t.type in ("link_open", "image")]
        headings = [t.tag for t in tokens if t.type == "heading_open"]
        assert headings.count("h2") == 1 and set(headings) <= {"h2", "h3"}, headings

    return check


def cuda_sources(b_extra: str) -> Callable[[Any], Any]:
    """B's kernel with a CUDA source holding ``b_extra`` (A gets the same source without it from
    :func:`both_sources`), so the report shows the diff of the two."""
    return put("fusions.0.cuda_sources", {KERNEL: f"__global__ void k() {{\n{b_extra}\n}}\n"})


def both_sources(tmp: Path, cap: Path) -> None:
    """A (``a.json``, the recording) with the same kernel's source, without the extra lines."""
    other = json.loads((tmp / "other.json").read_text())
    other["fusions"][0]["cuda_sources"] = {KERNEL: "__global__ void k() {\n\n}\n"}
    (tmp / "a.json").write_text(json.dumps(other))


def copy_to(name: str) -> Callable[[Path, Path], None]:
    return lambda tmp, cap: (tmp / name).write_bytes(cap.read_bytes())


MARKDOWN = [
    Case(
        "markdown",
        "<img onerror> in the fusion name",
        REPORT_MD,
        put("fusions.0.name", HTML_ATTACK),
        0,
        None,
        check=md_inert(),
    ),
    Case(
        "markdown",
        "HTML in a kernel name",
        REPORT_MD,
        both(
            put("fusions.0.kernels.1.name", KERNEL + HTML_ATTACK),
            put("fusions.0.kernels.1.normalized_name", HTML_ATTACK),
        ),
        0,
        None,
        check=md_inert(),
    ),
    Case(
        "markdown",
        "links in the GPU name and a version",
        REPORT_MD,
        both(put("environment.gpu_name", LINK_ATTACK), put("environment.torch_version", HTML_ATTACK)),
        0,
        None,
        check=md_inert(),
    ),
    Case(
        "markdown",
        "<script> in a warning",
        REPORT_MD,
        put("warnings", [HTML_ATTACK, LINK_ATTACK]),
        0,
        None,
        check=md_inert(),
    ),
    Case(
        "markdown",
        "``` in a definition line closes no fence",
        REPORT_MD,
        put("fusions.0.definition", RECORDED_DATA["fusions"][0]["definition"] + f"```\n{HTML_ATTACK}\n### Forged\n"),
        0,
        None,
        check=md_inert(),
    ),
    Case(
        "markdown",
        "``` in a CUDA source line closes no fence",
        "report {tmp}/a.json {cap} --format md",
        cuda_sources(f"````\n{HTML_ATTACK}\n## Forged verdict: SAME"),
        0,
        None,
        setup=both_sources,
        check=md_inert(),
    ),
    Case(
        "markdown",
        "a backtick in an NVFUSER_ name leaves no code span",
        REPORT_MD,
        put("environment.nvfuser_env", {f"NVFUSER_X` {HTML_ATTACK} `": "1", "NVFUSER_Y``": LINK_ATTACK}),
        0,
        None,
        check=md_inert(),
    ),
    Case(
        "markdown",
        "HTML and links in the capture's file name",
        "report {other} '{tmp}/<img src=x onerror=alert(1)>[l](https:evil) `x`.json' --format md",
        None,
        0,
        None,
        setup=copy_to("<img src=x onerror=alert(1)>[l](https:evil) `x`.json"),
        check=md_inert(),
    ),
    Case(
        "markdown",
        "a hostile report written to a file",
        "report {other} {cap} -o {tmp}/r.md",
        both(put("fusions.0.name", HTML_ATTACK), put("source", LINK_ATTACK)),
        0,
        r"^wrote .*r\.md \(md\)$",
        check=md_inert("r.md"),
    ),
    Case(
        "markdown",
        "control characters in Markdown on a terminal",
        REPORT_MD,
        put("fusions.0.name", TERMINAL),
        0,
        None,
        check=shows("x1b"),
    ),
    Case(
        "markdown",
        "control characters in HTML on a terminal",
        REPORT_HTML,
        put("fusions.0.name", TERMINAL),
        0,
        None,
        check=shows("\\u202eevil\\x08"),
    ),
    Case(
        "markdown",
        "control characters in a Perfetto trace on a terminal",
        "report {other} {cap} --format perfetto",
        put("fusions.0.name", TERMINAL),
        0,
        None,
    ),
]

REPORT_CASES = [*MARKDOWN]
