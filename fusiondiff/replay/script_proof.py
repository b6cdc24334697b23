"""Proof that Python reads a written repro script as the code fusiondiff meant to write.

:mod:`fusiondiff.replay.script_safety` proves what goes into the *text* of a script. Python does
not run that text: it runs the file's bytes, decoded with the codec that a PEP 263 declaration on
line 1 or 2 names. A capture's text there (``fusion0 coding:unicode_escape`` in a fusion name or
in the capture's file name) once made Python decode ``\\x0a`` into a line break and run what
followed. So every script is written with a fixed first line, ``# -*- coding: utf-8 -*-``, and a
fixed second line, and is then read back from the written bytes the way the interpreter reads a
file (:func:`tokenize.detect_encoding`, then :func:`compile` of the bytes): it is kept only when
that syntax tree is the tree of the text fusiondiff meant (:func:`write_script`).
"""

from __future__ import annotations

import ast
import io
import os
import tokenize
from pathlib import Path
from typing import NoReturn

from fusiondiff.records.errors import ReplayError
from fusiondiff.records.escape import printable

ENCODING_LINE = "# -*- coding: utf-8 -*-"
"""Line 1 of every script: the codec is ours, whatever a capture holds."""
SECOND_LINE = "# Written by fusiondiff; nothing from the capture is on these first two lines."
"""Line 2: Python also reads a codec declaration there, so it holds no text from a capture."""
PINNED = (ENCODING_LINE, SECOND_LINE)


def pinned_header() -> list[str]:
    """The first two lines of every script fusiondiff writes."""
    return list(PINNED)


def prove_script(data: bytes, intended: str, where: str) -> None:
    """Raise :class:`ReplayError` (one line naming ``where``) unless Python, reading ``data`` as it
    reads a script file, reads exactly the text ``intended`` (so the syntax tree of it) and
    compiles it, with the pinned codec line and second line."""

    def refuse(why: str) -> NoReturn:
        raise ReplayError(f"{where}: not written: Python would not read it as the code fusiondiff wrote ({why})")

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        refuse(f"its encoding: {printable(str(exc.msg))}")
    if encoding != "utf-8":
        refuse(f"it would be decoded as {printable(encoding)!r}")
    first_lines = data.split(b"\n", 2)[:2]
    if first_lines != [line.encode("ascii") for line in PINNED]:
        refuse("its first two lines are not the pinned ones")
    # Decoded with the codec Python will use, the bytes must be the text meant, character for
    # character: then Python's parser reads the tree of that text, and one compile of the bytes
    # (as the interpreter reads the file) shows it compiles. Comparing the two trees' dumps as well
    # cost 15 s for a script of 20,000 inputs, and could only repeat what this equality shows.
    try:
        read_back = data.decode(encoding)
    except UnicodeDecodeError as exc:
        refuse(f"its bytes are not {encoding}: {printable(exc.reason)}")
    if read_back != intended:
        refuse("its text differs from the one meant")
    try:
        compile(data, where, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        refuse(f"it does not compile: {printable(str(getattr(exc, 'msg', exc)))}")


def write_script(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` as UTF-8 to ``path`` atomically, and keep it only once :func:`prove_script`
    holds for the bytes written (read back from the file itself); otherwise nothing is left and
    :class:`ReplayError` says why in one line."""
    from fusiondiff.io.files import atomic_write

    where = printable(str(path))
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ReplayError(f"{where}: not written: it holds text no encoder takes ({exc.reason})") from None

    def write(tmp: str) -> None:
        Path(tmp).write_bytes(data)
        prove_script(Path(tmp).read_bytes(), text, where)

    atomic_write(Path(path), write)
