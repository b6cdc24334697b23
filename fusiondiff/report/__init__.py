"""Renderers: pure functions from records to text, chosen by name. The library never prints.

Every diff renderer is a :class:`~fusiondiff.report.interface.Renderer` taking a
:class:`~fusiondiff.report.interface.DiffReport` (the diff and its two captures);
:func:`get_renderer` finds one by its ``--format`` name:

========  ==========================================================================
text      the terminal summary (:mod:`.diff_text`)
json      the diff record: diff, both environments and protocols, samples (:mod:`.record`)
md        Markdown to paste into an issue (:mod:`.markdown`)
html      one self-contained page with plots, offline (:mod:`.html`)
perfetto  Chrome trace-event JSON for ui.perfetto.dev, with a derived per-SM view (:mod:`.perfetto`)
========  ==========================================================================

Renderer modules are imported when asked for, so ``import fusiondiff.report`` stays light.
"""

from __future__ import annotations

import importlib

from fusiondiff.report.interface import DiffReport, Renderer, ReportError

_RENDERERS: dict[str, tuple[str, str]] = {
    "text": ("fusiondiff.report.text_json", "TextRenderer"),
    "json": ("fusiondiff.report.text_json", "JsonRenderer"),
    "md": ("fusiondiff.report.markdown", "MarkdownRenderer"),
    "html": ("fusiondiff.report.html", "HtmlRenderer"),
    "perfetto": ("fusiondiff.report.perfetto", "PerfettoRenderer"),
}
"""Format name -> (module, class), in the order ``--help`` lists them."""

FORMATS: tuple[str, ...] = tuple(_RENDERERS)


def get_renderer(name: str) -> Renderer:
    """The renderer registered under ``name``; :class:`ReportError` naming the known ones otherwise."""
    try:
        module, cls = _RENDERERS[name]
    except KeyError:
        raise ReportError(f"unknown report format {name!r}; choose one of {', '.join(FORMATS)}") from None
    return getattr(importlib.import_module(module), cls)()


def render(name: str, report: DiffReport) -> str:
    """``report`` rendered by the renderer called ``name``."""
    return get_renderer(name).render(report)


__all__ = ["FORMATS", "DiffReport", "Renderer", "ReportError", "get_renderer", "render"]
