"""Text laid out for a terminal's width (issue #41): a line too long for it is wrapped at its field
separators, its continuation indented under it; a word longer than the width (an ATen kernel's C++
signature) is broken across lines rather than run past the edge. The front chooses the width
(:func:`fusiondiff.front.stdio.output_width`: the terminal's, 100 columns when the output is not one)."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Sequence

from fusiondiff.records.limits import LINE_CHARS

DEFAULT_WIDTH = 100
"""The width of text that goes to a file or a pipe, and the least a terminal is laid out for."""
MIN_WIDTH = 40
"""Narrower terminals get this: below it no table reads at all."""

_KEEP = "\x00"
"""Stands for a space that must not break a line (inside brackets: ``bfloat16[2, 512, 896]``)."""
_BRACKETED = re.compile(r"\[[^\[\]]*\]|\([^()]{0,24}\)")
"""A shape, a list or a short parenthesis (``(iqr 0.13 us)``) stays on one line; a longer one may break."""


def fit(line: str, width: int | None = DEFAULT_WIDTH, hang: int = 4, break_words: bool = True) -> list[str]:
    """``line`` as lines of at most ``width`` columns: as it is when it fits (or ``width`` is None),
    else wrapped at spaces outside brackets, each continuation indented ``hang`` more than the line.
    A word longer than a line is broken across lines, or with ``break_words`` False left whole on
    a line of its own (a path in a note on stderr, which is copied as it is).
    A line longer than :data:`~fusiondiff.records.limits.LINE_CHARS` (a name someone made a
    megabyte long) is cut there first, and says how much was left out."""
    line = cut(line)
    if width is None or len(line) <= width:
        return [line]
    indent = len(line) - len(line.lstrip(" "))
    body = _BRACKETED.sub(lambda m: m.group(0).replace(" ", _KEEP), line[indent:])
    wrapped = textwrap.wrap(
        body,
        width=width,
        initial_indent=" " * indent,
        subsequent_indent=" " * min(indent + hang, width // 2),
        break_long_words=break_words,
        break_on_hyphens=False,
    )
    return [w.replace(_KEEP, " ") for w in wrapped] or [line[:width]]


def cut(line: str, limit: int = LINE_CHARS) -> str:
    """``line`` as it is up to ``limit`` characters, else its first ``limit`` and how many more."""
    if len(line) <= limit:
        return line
    return f"{line[:limit]} ... ({len(line) - limit} more characters not shown)"


def fit_all(lines: Iterable[str], width: int | None = DEFAULT_WIDTH) -> list[str]:
    """Every line fitted to ``width`` (:func:`fit`; None: as they are)."""
    return [part for line in lines for part in fit(line, width)]


def table(
    header: Sequence[str], rows: Sequence[Sequence[str]], width: int | None = None, keys: int = 2, name_max: int = 60
) -> list[str]:
    """A table as lines of at most ``width`` columns, nothing left out: as one table where it fits
    (or ``width`` is None); else its columns after the ``keys`` first ones in groups, one table
    after another, each repeating the key columns, so a row is read across one screen. The first
    key (a name) fills a row with ``""`` under the row it names; one longer than its column (at most
    ``name_max``, or a third of the width) gets a line of its own. A row shorter than ``header``
    ends in a sentence instead of its cells (a refusal), shown in the first group only."""
    cols = len(header)
    full = [r for r in rows if len(r) == cols]
    cap = name_max if width is None else min(name_max, max(width // 3, 12))
    names = [len(r[0]) for r in rows if len(r[0]) <= cap]
    widths = [max([len(header[0]), *names])] + [
        max([len(h), *(len(r[i]) for r in full), *(len(r[i]) for r in rows if i < keys and len(r) > i)])
        for i, h in enumerate(header)
        if i > 0
    ]
    key_width = 2 + sum(widths[:keys]) + 2 * keys
    groups: list[list[int]] = []
    for i in range(keys, cols):
        if groups and (width is None or key_width + sum(widths[j] + 2 for j in groups[-1]) + widths[i] <= width):
            groups[-1].append(i)
        else:
            groups.append([i])
    lines: list[str] = []
    for g, group in enumerate(groups):
        shown = [*range(keys), *group]
        if g:
            lines.append("")
        lines.append(("  " + "  ".join(header[i].ljust(widths[i]) for i in shown)).rstrip())
        pending = ""
        for row in rows:
            pending = row[0] or pending
            if len(row) < cols and g:
                continue  # a sentence: said in the first group
            name, pending = pending, ""
            if len(name) > widths[0]:
                lines.append(f"  {name}")
                name = ""
            cells = [name, *row[1:]]
            if len(row) < cols:
                lines.append("  " + "  ".join(v.ljust(widths[i]) for i, v in enumerate(cells[:keys])) + "  " + row[-1])
            else:
                lines.append(("  " + "  ".join(cells[i].ljust(widths[i]) for i in shown)).rstrip())
    return lines
