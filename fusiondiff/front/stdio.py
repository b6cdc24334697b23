"""The command line's standard streams: a report written to stdout whole or as one error, and the
streams a command was started without.

A full disk or a closed pipe under stdout is an error when the report is written, not a traceback
when the interpreter flushes at exit; a command started with a standard stream closed (``>&-``)
gets ``/dev/null`` at that descriptor before it opens any file, so no file takes the number (a
child process would write its output into it), and a report with nowhere to go is one error line.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterable

from fusiondiff.records.errors import OutputError


class StdoutError(OutputError):
    """The report could not be written to stdout (a full device, a closed pipe)."""

    def __init__(self, exc: OSError) -> None:
        super().__init__(f"cannot write the report to stdout: {exc.strerror or exc}")
        self.broken_pipe = exc.errno == errno.EPIPE


def emit(text: str | Iterable[str], fit: bool = False) -> None:
    """Write a report to stdout, all of it (a text, or its pieces as its renderer makes them): a
    full disk or a closed pipe is an error now, not a traceback when the interpreter flushes at exit.
    ``fit``: a text's lines escaped and wrapped to the output's width first (:func:`fitted`)."""
    if fit and isinstance(text, str):
        text = fitted(text)
    try:
        for piece in [text] if isinstance(text, str) else text:
            sys.stdout.write(piece)
        sys.stdout.flush()
    except OSError as exc:
        raise StdoutError(exc) from None


class ReportStream:
    """stdout for code that writes its report as it goes (``out.write``), failing like :func:`emit`."""

    def write(self, text: str) -> int:
        emit(text)
        return len(text)

    def flush(self) -> None:
        emit("")


def silence_stdout() -> None:
    """Point stdout at /dev/null, so what is still buffered for a failed stdout cannot fail again
    when the interpreter exits."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


class ClosedStdout:
    """``sys.stdout`` of a command started with its standard output closed: writing a report fails
    as a closed pipe would (one error line), while a command that prints nothing there works."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed")

    def flush(self) -> None:
        pass

    def fileno(self) -> int:
        return 1


def guard_closed_streams() -> None:
    """Put ``/dev/null`` at each standard descriptor the command was started without, before any
    file is opened: a file opened now would take that number, and a child process would write its
    output into it. A closed stderr discards; a closed stdout is :class:`ClosedStdout`."""
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        if getattr(sys, name) is not None:
            continue
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
        if name == "stdout":
            sys.stdout = ClosedStdout()
        elif name == "stderr":
            sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - for the rest of the process


def fitted(text: str) -> str:
    """``text`` with every line escaped (names come from captures) and wrapped to the output's width."""
    from fusiondiff.records.escape import printable
    from fusiondiff.report.layout import fit_all

    return "".join(line + "\n" for line in fit_all((printable(line) for line in text.splitlines()), output_width()))


def output_width() -> int:
    """The columns a report on stdout is laid out for: ``COLUMNS`` where it is set to a number,
    else the terminal's, 100 when stdout is not a terminal (a pipe, a file); at least 40."""
    return _width(sys.stdout)


def stderr_width() -> int:
    """The columns a note on stderr is fitted to, decided as :func:`output_width` decides stdout's
    from stderr's own terminal: ``2>log`` gets 100 even when stdout is a terminal."""
    return _width(sys.stderr)


def _width(stream: object) -> int:
    """``COLUMNS`` where it is set to a number, else the width of the terminal ``stream`` is (100
    when it is none, or closed, or an object without ``isatty``); at least 40."""
    from fusiondiff.report.layout import DEFAULT_WIDTH, MIN_WIDTH

    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return max(MIN_WIDTH, int(columns))
    try:
        if not stream.isatty():  # type: ignore[attr-defined]
            return DEFAULT_WIDTH
        size = os.get_terminal_size(stream.fileno()).columns  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):  # closed, or replaced by an object without isatty
        return DEFAULT_WIDTH
    return max(MIN_WIDTH, size or DEFAULT_WIDTH)


def note(line: str) -> None:
    """Write one note to stderr (progress, a warning, ``wrote PATH``, a line relayed from a replay
    process): escaped, as it quotes captures, and fitted to :func:`stderr_width`, its continuation
    lines indented under it, so a narrow terminal reads it whole; a word (a path) longer than a line
    is left whole, to be copied. In one write, so notes from
    several threads do not interleave within one. An error is no note: it stays one line, which
    scripts and tests read whole."""
    from fusiondiff.records.escape import printable
    from fusiondiff.report.layout import fit

    sys.stderr.write("".join(part + "\n" for part in fit(printable(line), stderr_width(), break_words=False)))
    sys.stderr.flush()
