"""Text from a capture, shown safely.

Captures travel (people attach them to bug reports), so their names, sources and warnings are
someone else's text. Shown raw, an escape sequence in a fusion name could recolour the terminal,
move the cursor or hide a line, a NUL byte or a line break could forge a line of the report, and
a lone surrogate cannot even be encoded to be shown.
"""

from __future__ import annotations


def printable(text: str) -> str:
    """``text`` with every character that is not printable written as its Python escape.

    Control characters (ESC ``\\x1b``, NUL ``\\x00``, ``\\n``, ``\\r``, ``\\t``), Unicode line and
    paragraph separators, bidirectional overrides and lone surrogates become ``\\x1b``,
    ``\\u2028``... as ``repr`` writes them; everything printable, spaces and non-ASCII letters
    included, is unchanged. The result is one line that cannot act on a terminal.
    """
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def printable_lines(text: str) -> str:
    """``text`` line by line made :func:`printable`, its ``\\n`` line breaks and tabs kept: a
    document of many lines (a Markdown or HTML report) printed to a terminal."""
    if text.isprintable():
        return text
    return "\n".join("\t".join(printable(part) for part in line.split("\t")) for line in text.split("\n"))
