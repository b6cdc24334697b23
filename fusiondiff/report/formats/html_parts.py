"""The pieces of HTML every report part writes the same way: text from a record, escaped, and a
table of numbers; the HTML report (:mod:`.html`) and the parts it includes
(:mod:`.traffic_markup`, :mod:`.speed_of_light_view`) share them."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from fusiondiff.records.escape import printable
from fusiondiff.records.limits import TEXT_CHARS
from fusiondiff.report.layout import cut


def escaped(text: object) -> str:
    """Text from a record in the page: cut to ``TEXT_CHARS`` (the rest counted), HTML-escaped, and
    its control characters (ESC, a bidi override, a line break) written as escapes, as the
    terminal shows them."""
    return escape(printable(cut(str(text), TEXT_CHARS)))


def number_table(header: Sequence[str], rows: Sequence[Sequence[str]], left: tuple[int, ...] = (0,)) -> str:
    """A table whose columns are numbers, right-aligned, but for those at ``left`` (names, marks)."""
    head = "".join(f"<th>{escaped(h)}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(
            f"<td>{escaped(v)}</td>" if i in left else f'<td class="num">{escaped(v)}</td>' for i, v in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f'<div class="tw"><table class="fdt"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
