"""One report document, several backends: the answer is built once
(:mod:`fusiondiff.report.views.document`) and the text, Markdown and HTML formats (the notebook
shows the HTML) only mark it up. Read from the source, no format module words a finding, reads a
question's view or a finding's links itself; run over every recorded pair, each format holds each
section's ledger line and each finding's title and "explains" words as the document has them."""

from __future__ import annotations

import ast
import gzip
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from fusiondiff.front.api import open_report
from fusiondiff.records.errors import FusionDiffError
from fusiondiff.records.escape import printable
from fusiondiff.report import render
from fusiondiff.report.formats import md_text
from fusiondiff.report.formats.html import diff_html_fragment
from fusiondiff.report.formats.html_parts import escaped
from fusiondiff.report.interface import DiffReport
from fusiondiff.report.views import content
from fusiondiff.report.views.document import MAX_FINDINGS, Document, build_document

ROOT = Path(__file__).resolve().parents[2]
FORMATS = ROOT / "fusiondiff" / "report" / "formats"
DATA = ROOT / "tests" / "data"

BUILT_BY_THE_DOCUMENT = {"question_views", "explains_text", "finding_links", "title", "evidence_lines"}
"""What only the document calls: a question's view, a finding's words and its links."""
_OWNERS = {"wording", "questions", "content", "c", "report_words"}
"""The modules (as the formats name them) those come from; a bare ``title`` elsewhere is a string's."""


def _document_calls(source: str) -> list[str]:
    """Where ``source`` calls or imports what only the document may: each as ``line: code``."""
    found = []
    for n in ast.walk(ast.parse(source)):
        hit = False
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
            hit = n.attr in BUILT_BY_THE_DOCUMENT and n.value.id in _OWNERS
        elif isinstance(n, ast.Name):
            hit = n.id in BUILT_BY_THE_DOCUMENT - {"title"}
        elif isinstance(n, ast.ImportFrom) and n.module:
            hit = n.module.rsplit(".", 1)[-1] in _OWNERS and any(a.name in BUILT_BY_THE_DOCUMENT for a in n.names)
        if hit:
            found.append(f"{n.lineno}: {ast.get_source_segment(source, n)}")
    return found


def test_no_format_words_a_finding_or_reads_a_question_itself():
    found = {path.name: hits for path in sorted(FORMATS.glob("*.py")) if (hits := _document_calls(path.read_text()))}
    assert not found


def test_the_format_check_can_fail():
    planted = (
        "from fusiondiff.report.words.questions import question_views\n"
        "a = wording.title(f)\n"
        "b = explains_text(f)\n"
        "c.finding_links(f)\n"
        "x = view.title\n"  # a section's title is the document's field: no hit
        "y = 'a b'.title()\n"
    )
    assert [hit.split(":")[0] for hit in _document_calls(planted)] == ["1", "2", "3", "4"]


def test_report_modules_have_names_no_other_module_has():
    """``report/views/blocks.py`` shared its name with ``records/blocks.py``: a module of report/
    is found by its name alone."""
    package = ROOT / "fusiondiff"
    names: dict[str, list[str]] = {}
    for path in package.rglob("*.py"):
        if path.name != "__init__.py":
            names.setdefault(path.stem, []).append(str(path.relative_to(package)))
    report = {p.stem for p in (package / "report").rglob("*.py") if p.name != "__init__.py"}
    assert {name: paths for name, paths in names.items() if name in report and len(paths) > 1} == {}


def _kind(path: Path) -> str | None:
    """The capture's ``kind``, or None for a file that is no capture (as tests/check_behaviour.py reads them)."""
    try:
        raw = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError, gzip.BadGzipFile):
        return None
    if not isinstance(data, dict) or "schema_version" not in data or "fusions" not in data:
        return None
    return str(data.get("kind"))


def recorded_pairs() -> list[tuple[Path, Path]]:
    """Every recorded pair under tests/data, as the behaviour check pairs them: in each folder each
    live capture with each replay, or (a folder of one kind) each capture with the next."""
    found = [p for p in sorted(DATA.rglob("*.json*")) if p.suffix == ".json" or p.name.endswith(".json.gz")]
    kinds = {p: _kind(p) for p in found}
    by_folder: dict[Path, list[Path]] = {}
    for p in found:
        if kinds[p] is not None:
            by_folder.setdefault(p.parent, []).append(p)
    pairs = []
    for _, inside in sorted(by_folder.items()):
        live_replay = [(a, b) for a in inside for b in inside if kinds[a] == "live" and kinds[b] == "replay"]
        pairs += live_replay or list(zip(inside, inside[1:]))
    return pairs


PAIRS = recorded_pairs()


def _marked(document: Document, markup: Callable[[str], str], page: str, *, terminal: bool) -> list[str]:
    """What of ``document`` ``page`` lacks, each string as ``markup`` writes it: every answer
    line, each section's ledger line and each finding's title and "explains" words (the terminal:
    the sections and findings it shows, as the document says)."""
    wanted = [a.line for a in document.answers]
    for section in document.sections:
        if terminal and section.quiet:
            continue
        wanted.append(section.ledger)
        for item in section.items[: section.shown] if terminal else section.items:
            wanted += [item.title, item.explains]
    return [w for w in wanted if markup(w) not in page]


def test_every_recorded_pair_is_paired():
    assert len(PAIRS) > 150
    assert any(b.name.endswith(".json.gz") or a.name.endswith(".json.gz") for a, b in PAIRS)


@pytest.mark.parametrize("pair", PAIRS, ids=[f"{a.relative_to(DATA)}|{b.name}" for a, b in PAIRS])
def test_every_format_holds_the_document(pair):
    try:
        report = open_report(list(pair))
    except FusionDiffError as exc:  # a pair the diff refuses (nothing in common) has no document
        pytest.skip(f"not diffed: {exc}")
    text_document = build_document(report.result, report, report.selection)
    assert not _marked(text_document, printable, render("text", report), terminal=True)
    assert sum(s.shown for s in text_document.sections) <= MAX_FINDINGS
    clean: DiffReport = content.clean_report(report)
    document = build_document(clean.result, clean, clean.selection)
    assert not _marked(document, md_text.inline, render("md", report), terminal=False)
    for page in (render("html", report), diff_html_fragment(report)):
        assert not _marked(document, escaped, page, terminal=False)


def test_the_pair_check_can_fail():
    """A format that drifted from the document (a finding's words of its own, a section left out)
    is caught: here the Markdown page of a recorded pair with its first finding reworded and
    the host section's ledger line dropped (DERIVED from the rendered page)."""
    report = open_report(
        [DATA / "h100/offset_thunderfx_4096/live.json", DATA / "h100/offset_thunderfx_4096/replay_nvfuser.json"]
    )
    clean = content.clean_report(report)
    document = build_document(clean.result, clean, clean.selection)
    page = render("md", report)
    first = document.sections[0].items[0]
    host = document.sections[1]
    assert not _marked(document, md_text.inline, page, terminal=False)
    drifted = page.replace(md_text.inline(first.explains), "explains it all").replace(
        f"Ledger: {md_text.inline(host.ledger)}", "Ledger: -", 1
    )
    assert _marked(document, md_text.inline, drifted, terminal=False) == [first.explains, host.ledger]


def test_the_terminal_lists_the_captures_warnings_up_to_its_limit_and_the_documents_all():
    """The text listed the diff's warnings alone; now each capture's too, as Markdown and HTML do,
    the terminal the first :data:`MAX_WARNINGS` of them. B is a recorded replay DERIVED here with
    60 warnings of its own."""
    import dataclasses

    from fusiondiff.diff.core import diff
    from fusiondiff.io.store import load_capture
    from fusiondiff.report.views.document import MAX_WARNINGS

    a = load_capture(DATA / "cli" / "live.json")
    b = load_capture(DATA / "cli" / "replay_inputs.json")
    assert b.warnings and not a.warnings
    recorded = DiffReport(diff(a, b), a, b)
    listed = build_document(recorded.result, recorded).warnings
    assert listed[-1].startswith("B: inputs replaced by")  # its path cut to the file's name
    assert f"  {listed[-1]}\n" in render("text", recorded).split("\nwarnings\n")[1]
    many = dataclasses.replace(b, warnings=tuple(f"planted warning {i}" for i in range(60)))
    report = DiffReport(diff(a, many), a, many)
    document = build_document(report.result, report)
    assert document.warnings_shown == MAX_WARNINGS < len(document.warnings)
    text = render("text", report)
    assert f"B: planted warning {MAX_WARNINGS - 1}\n" in text and f"planted warning {MAX_WARNINGS}\n" not in text
    assert f"... {len(document.warnings) - MAX_WARNINGS} more warning(s)" in text
    assert all(md_text.inline(w) in render("md", report) for w in document.warnings)
