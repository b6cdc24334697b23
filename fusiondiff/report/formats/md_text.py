"""Text from captures made inert in the Markdown report, which people paste where others read it.

GitHub renders raw HTML (it strips scripts, not images, links, headings or ``<details>``), links,
images, emphasis and bare URLs; a backtick run closes a code span or a fence of the same length.
So every text that can come from a capture (names, versions, warnings, sources, file names, and
the finding sentences that quote them) goes into the report through one of these:

- :func:`inline` for running text and table cells (each cut to ``TEXT_CHARS``): control characters and line breaks written as
  escapes (one line that cannot start a block), every character that can open a Markdown or HTML
  construct backslash-escaped (``<``, ``&``, ``[``, ``!``, emphasis, ``|``...), and bare URLs,
  domains and e-mail addresses broken (``http\\://``, ``evil\\.com``, ``\\@``); code spans the
  text already holds (the rules quote commands in backticks) are kept as CommonMark reads them:
  literal text, never markup;
- :func:`code` for a code span: a backtick fence longer than any run in the text;
- :func:`fence` for a fenced block: a fence longer than any backtick run in its lines;
- :func:`html_text` for text inside the report's own HTML (``<summary>``).
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from fusiondiff.records.escape import printable
from fusiondiff.records.limits import TEXT_CHARS
from fusiondiff.report.layout import cut

_ALWAYS = frozenset("\\`*[<&|~@$")
"""Characters that open a construct wherever they are (``@``: an e-mail link; ``$``: GitHub's
inline math); ``]``, ``!`` and ``>`` open nothing without them, save ``>`` at a line's start."""
_BLOCK_START = re.compile(r"(?:[-+>]|\d{1,9}[.)])(?=[ \t]|$)|>|#{1,6}")
"""What opens a block (a list item, a heading) at the start of a list item's text."""
_RUN = re.compile(r"`+")


def inline(text: object, *, table: bool = False) -> str:
    """``text`` as Markdown that renders as that text: see the module docstring. In a table cell
    (``table``) pipes inside code spans are escaped too, as GitHub's tables need."""
    out: list[str] = []
    for literal, span in _code_spans(printable(cut(str(text), TEXT_CHARS))):
        # a table cell opens no block; running text may be a list item's first word
        out.append(_escape(literal, start=not out and not table))
        if span:
            out.append(span.replace("|", "\\|") if table else span)
    return "".join(out)


def code(text: object) -> str:
    """``text`` as one code span (``-`` for nothing): a fence of one backtick more than the
    longest run in it, padded where it starts or ends with a backtick or a space."""
    text = printable(str(text))
    if text in ("", "-"):
        return "-"
    fence = "`" * (_longest_run(text) + 1)
    pad = " " if text[0] in "` " or text[-1] in "` " else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def fence(lines: list[str] | tuple[str, ...], language: str) -> list[str]:
    """A fenced code block of ``lines``: each line's control characters (tabs aside) written as
    escapes, so no line break, carriage return or escape sequence hides in it, and a fence of at
    least three backticks, one more than the longest run in any line, so no line closes it."""
    shown = [_visible_line(line) for line in lines]
    marker = "`" * max(3, max((_longest_run(line) for line in shown), default=0) + 1)
    return [f"{marker}{language}", *shown, marker]


def table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str = "") -> list[str]:
    """A GitHub table, every cell through :func:`inline`; ``align`` has one of ``l``/``r`` per
    column (left by default)."""
    marks = ["---:" if a == "r" else "---" for a in align.ljust(len(header), "l")]
    lines = ["| " + " | ".join(inline(h, table=True) for h in header) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(inline(v, table=True) for v in row) + " |" for row in rows]
    return lines


def html_text(text: object) -> str:
    """``text`` inside the report's own HTML (``<summary>``): one printable line, HTML-escaped."""
    return html.escape(printable(str(text)), quote=True)


def _code_spans(text: str) -> list[tuple[str, str]]:
    """``text`` cut as CommonMark cuts code spans: (literal text, the code span after it, or
    ``""``) pieces. A backtick run opens a span closed by the next run of the same length; a run
    with no such closer is literal text."""
    runs = [(m.start(), m.end()) for m in _RUN.finditer(text)]
    pieces, literal_from, k = [], 0, 0
    while k < len(runs):
        start, end = runs[k]
        closer = next((j for j in range(k + 1, len(runs)) if runs[j][1] - runs[j][0] == end - start), None)
        if closer is None:
            k += 1
            continue
        pieces.append((text[literal_from:start], text[start : runs[closer][1]]))
        literal_from, k = runs[closer][1], closer + 1
    pieces.append((text[literal_from:], ""))
    return pieces


def _escape(text: str, start: bool) -> str:
    out = []
    opener = _BLOCK_START.match(text) if start else None
    for i, ch in enumerate(text):
        before = text[i - 1] if i else ""
        after = text[i + 1] if i + 1 < len(text) else ""
        if (
            ch in _ALWAYS
            or (opener is not None and i == opener.end() - 1)
            # emphasis: an underscore between letters or digits opens and closes nothing
            or (ch == "_" and not (before.isalnum() and after.isalnum()))
            # bare links GitHub makes: a scheme's ://, www.
            or (ch == ":" and after == "/")
            or (ch == "." and text[max(i - 3, 0) : i].lower() == "www")
        ):
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def _longest_run(text: str) -> int:
    return max((len(m) for m in _RUN.findall(text)), default=0)


def _visible_line(line: str) -> str:
    return "\t".join(printable(part) for part in line.split("\t"))
