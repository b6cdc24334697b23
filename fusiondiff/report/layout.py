"""Text laid out for a terminal's width (issue #41): a line too long for it is wrapped at its field
separators, its continuation indented under it; a word longer than the width (an ATen kernel's C++
signature) is broken across lines rather than run past the edge. The front chooses the width
(:func:`fusiondiff.stdio.output_width`: the terminal's, 100 columns when the output is not one)."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable

DEFAULT_WIDTH = 100
"""The width of text that goes to a file or a pipe, and the least a terminal is laid out for."""
MIN_WIDTH = 40
"""Narrower terminals get this: below it no table reads at all."""

_KEEP = "\x00"
"""Stands for a space that must not break a line (inside brackets: ``bfloat16[2, 512, 896]``)."""
_BRACKETED = re.compile(r"\[[^\[\]]*\]|\([^()]{0,24}\)")
"""A shape, a list or a short parenthesis (``(iqr 0.13 us)``) stays on one line; a longer one may break."""


def fit(line: str, width: int | None = DEFAULT_WIDTH, hang: int = 4) -> list[str]:
    """``line`` as lines of at most ``width`` columns: as it is when it fits (or ``width`` is None),
    else wrapped at spaces outside brackets, each continuation indented ``hang`` more than the line."""
    if width is None or len(line) <= width:
        return [line]
    indent = len(line) - len(line.lstrip(" "))
    body = _BRACKETED.sub(lambda m: m.group(0).replace(" ", _KEEP), line[indent:])
    wrapped = textwrap.wrap(
        body,
        width=width,
        initial_indent=" " * indent,
        subsequent_indent=" " * min(indent + hang, width // 2),
        break_long_words=True,
        break_on_hyphens=False,
    )
    return [w.replace(_KEEP, " ") for w in wrapped] or [line[:width]]


def fit_all(lines: Iterable[str], width: int | None = DEFAULT_WIDTH) -> list[str]:
    """Every line fitted to ``width`` (:func:`fit`; None: as they are)."""
    return [part for line in lines for part in fit(line, width)]
