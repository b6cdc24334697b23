"""The command line run in the test's own process, for tests of what a command prints and exits
with: a fresh interpreter per call costs a second or more (its imports), and tells nothing more
unless the process itself is what is tested (a signal, a closed stream, the console script's
start, the terminal's width). Those keep ``subprocess``; ``tests/front/test_command_line.py``
holds such tests."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
from pathlib import Path

from fusiondiff.front.cli import main


def fusiondiff(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``fusiondiff ARGS`` (in ``cwd``, else here) run by :func:`fusiondiff.front.cli.main` in this
    process: its stdout and stderr as text and its exit code, as ``subprocess.run`` gives them.
    stdout is no terminal, so reports are laid out for 100 columns, as through a pipe."""
    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse's refusals and --help
                code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(["fusiondiff", *argv], code, out.getvalue(), err.getvalue())


def notes(stderr: str) -> list[list[str]]:
    """``stderr`` as the notes a command wrote: each a line, with the lines indented 4 spaces under
    it that fitting it to the terminal's width made (:func:`fusiondiff.front.stdio.note`)."""
    said: list[list[str]] = []
    for line in stderr.splitlines():
        if said and line.startswith("    "):
            said[-1].append(line)
        else:
            said.append([line])
    return said
