"""Paths as reports show them: relative to where the captures are, never absolute.

A report is pasted into an issue or mailed around: an absolute path says nothing to its reader
and tells about the machine it was made on. Capture files are shown relative to the folder that
holds both captures (``offset/live.json``). Paths recorded inside a capture (the repro script of
a replay, ``/tmp/rec/scratch/repro.py``) were paths of the recording machine: they are shown
relative to the captures' folder where they lie under it, else by their file name (``…/repro.py``).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Sequence
from pathlib import Path

from fusiondiff.diff.records import Evidence, EvidenceValue

_ABSOLUTE = re.compile(r"(?<![\w.~/:-])/(?:[\w.+@-]+/)+[\w.+@-]+")
"""An absolute POSIX path of at least two parts, not preceded by a word (``B/A`` is no path)."""


def common_folder(paths: Sequence[str | os.PathLike[str]]) -> Path:
    """The deepest folder holding every one of ``paths``."""
    resolved = [str(Path(p).resolve().parent) for p in paths]
    return Path(os.path.commonpath(resolved)) if resolved else Path.cwd()


def display_paths(paths: Sequence[str | os.PathLike[str]]) -> list[str]:
    """Capture paths relative to the folder that holds them all, keeping that folder's name
    (``offset/live.json``, ``offset/replay.json``) so the reader knows which scenario it was."""
    base = common_folder(paths)
    anchor = base.parent if base.parent != base else base
    return [Path(p).resolve().relative_to(anchor).as_posix() for p in paths]


def scrub_paths(text: str, bases: Sequence[str | os.PathLike[str]] = ()) -> str:
    """``text`` with every absolute path made relative to the first of ``bases`` that holds it
    (keeping that base's name), or else cut to its file name behind ``…/``."""
    roots = [Path(b).resolve() for b in bases]

    def shorten(match: re.Match[str]) -> str:
        path = Path(match.group(0))
        for root in roots:
            if path.is_relative_to(root):
                return (Path(root.name) / path.relative_to(root)).as_posix()
        return f"…/{path.name}"

    return _ABSOLUTE.sub(shorten, text)


MAX_LISTED = 3
"""Items of a long list in a capture's source shown before the count of the rest."""


def short_list(text: str) -> str:
    """``text`` with a long comma-separated list cut to its first :data:`MAX_LISTED` items and a
    count (a replay's source names every script: ``26 scripts: a.py, b.py, ...``)."""
    items = text.split(", ")
    if len(items) <= MAX_LISTED + 1:
        return text
    return ", ".join(items[:MAX_LISTED]) + f" and {len(items) - MAX_LISTED} more"


def scrubbed_evidence(e: Evidence) -> Evidence:
    """Evidence with absolute paths cut from its text (a failure's message and log file, a
    variable's value)."""
    subject = None if e.subject is None else scrub_paths(e.subject)
    return dataclasses.replace(e, a=_scrubbed_value(e.a), b=_scrubbed_value(e.b), subject=subject)


def _scrubbed_value(value: EvidenceValue) -> EvidenceValue:
    if isinstance(value, str):
        return scrub_paths(value)
    if isinstance(value, tuple):
        return tuple(_scrubbed_value(v) for v in value)
    return value


def source_label(path: str | os.PathLike[str], source: str | None, *, whole: bool = False) -> str:
    """How a diff names a side read from ``path``: the path as given, then what the capture ran
    (:attr:`Capture.source`) with the recording machine's absolute paths cut and a long list of
    scripts shortened (:mod:`fusiondiff.report.words.paths`), as reports show it. ``whole`` keeps what it
    ran as recorded (:func:`diff_files` and the round trip's diff record)."""
    if not source:
        return str(path)
    if not whole:
        source = short_list(scrub_paths(source))
    return f"{path} ({source})"
