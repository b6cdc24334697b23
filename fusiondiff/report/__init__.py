"""Renderers: pure functions from records to text, chosen by name. The library never prints.

Every diff renderer is a :class:`~fusiondiff.report.interface.Renderer` taking a
:class:`~fusiondiff.report.interface.DiffReport` (the diff and its two captures);
:func:`get_renderer` finds one by its ``--format`` name, :func:`format_for_path` by the name of the
file it is to write. :data:`REPORT_FORMATS` is the one table of both:

========  ==========================  =====================================================
text      ``.txt``                    the terminal summary (:mod:`.diff_text`)
json      ``.json``                   the diff record: diff, environments, protocols, samples (:mod:`.record`)
md        ``.md``, ``.markdown``      Markdown to paste into an issue (:mod:`.markdown`)
html      ``.html``, ``.htm``         one self-contained page with plots, offline (:mod:`.html`)
perfetto  ``.perfetto.json``,         Chrome trace-event JSON for ui.perfetto.dev, with a derived
          ``.trace.json``             per-SM view (:mod:`.perfetto`)
========  ==========================  =====================================================

A plain ``.json`` is the diff record: a trace is JSON too, so it takes the longer suffixes (or
``--format perfetto``, which wins over any suffix). Any of them may end in ``.gz``: the file is
then gzipped (:func:`fusiondiff.io.files.write_text`). Renderer modules and the records are imported
when asked for, so ``import fusiondiff.report`` stays light (the command line reads the table while
it builds its parser).
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fusiondiff.records.errors import ReportError

if TYPE_CHECKING:
    from fusiondiff.report.interface import DiffReport, Renderer


@dataclass(frozen=True)
class ReportFormat:
    """One output format: its ``--format`` name, where its renderer is, the file suffixes that
    select it (the first is the one it writes) and its line in ``--help``."""

    name: str
    module: str
    cls: str
    suffixes: tuple[str, ...]
    description: str


REPORT_FORMATS: tuple[ReportFormat, ...] = (
    ReportFormat(
        "text",
        "fusiondiff.report.formats.text_json",
        "TextRenderer",
        (".txt",),
        "the terminal summary: verdict, fusions, ranked findings",
    ),
    ReportFormat(
        "json",
        "fusiondiff.report.formats.text_json",
        "JsonRenderer",
        (".json",),
        "the diff record: diff, both environments and protocols, samples, captures",
    ),
    ReportFormat(
        "md",
        "fusiondiff.report.formats.markdown",
        "MarkdownRenderer",
        (".md", ".markdown"),
        "Markdown to paste into a GitHub issue",
    ),
    ReportFormat(
        "html",
        "fusiondiff.report.formats.html",
        "HtmlRenderer",
        (".html", ".htm"),
        "one self-contained HTML page with plots (works offline)",
    ),
    ReportFormat(
        "perfetto",
        "fusiondiff.report.formats.perfetto",
        "PerfettoRenderer",
        (".perfetto.json", ".trace.json"),
        "Chrome trace-event JSON for ui.perfetto.dev: both sides on one timeline, derived per-SM view",
    ),
)
"""Every format, in the order ``--help`` lists them."""

FORMATS: tuple[str, ...] = tuple(f.name for f in REPORT_FORMATS)
_BY_NAME = {f.name: f for f in REPORT_FORMATS}


def report_format(name: str) -> ReportFormat:
    """The format called ``name``; :class:`ReportError` naming the known ones otherwise."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ReportError(f"unknown report format {name!r}; choose one of {', '.join(FORMATS)}") from None


def suffix_help() -> str:
    """``.txt (text), .json (json), .md or .markdown (md), ...``: which file names pick which format."""
    return ", ".join(f"{' or '.join(f.suffixes)} ({f.name})" for f in REPORT_FORMATS)


def format_for_path(path: str | os.PathLike[str]) -> str:
    """The format a file name asks for (the longest suffix that matches, ``.gz`` aside);
    :class:`ReportError` naming every suffix when none does."""
    name = Path(path).name.lower().removesuffix(".gz")
    matching = [(len(s), f.name) for f in REPORT_FORMATS for s in f.suffixes if name.endswith(s) and name != s]
    if not matching:
        raise ReportError(
            f"cannot tell the report format from the file name {Path(path).name!r}: give --format, or a name "
            f"ending in {suffix_help()}, each also with .gz"
        )
    return max(matching)[1]


def get_renderer(name: str, sm_tracks: bool = False) -> Renderer:
    """The renderer registered under ``name``; :class:`ReportError` naming the known ones otherwise.
    ``sm_tracks``: the Perfetto trace's track per SM (``--sm-tracks``), which no other format has."""
    entry = report_format(name)
    cls = getattr(importlib.import_module(entry.module), entry.cls)
    if not sm_tracks:
        return cls()
    if name != "perfetto":
        from fusiondiff.records.errors import ReportError

        raise ReportError(f"--sm-tracks is for the Perfetto trace (--format perfetto), not {name}")
    return cls(sm_tracks=True)


def render(name: str, report: DiffReport) -> str:
    """``report`` rendered by the renderer called ``name``."""
    return get_renderer(name).render(report)


def __getattr__(name: str) -> Any:
    # the records a renderer takes, imported when asked for: the command line reads the table of
    # formats above while it builds its parser, before it imports any record
    if name in ("DiffReport", "Renderer"):
        return getattr(importlib.import_module("fusiondiff.report.interface"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "FORMATS",
    "REPORT_FORMATS",
    "DiffReport",
    "Renderer",
    "ReportError",
    "ReportFormat",
    "format_for_path",
    "get_renderer",
    "render",
    "report_format",
    "suffix_help",
]
