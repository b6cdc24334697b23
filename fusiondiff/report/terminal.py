"""What ``fusiondiff diff`` prints: the summary (:mod:`fusiondiff.report.formats.diff_text`, the
report document with the captures' warnings), then the
block-level (:mod:`fusiondiff.report.views.block_view`) and conditions (:mod:`fusiondiff.report.views.environment_view`)
tables, laid out for the terminal (issue #41)."""

from __future__ import annotations

from fusiondiff.report.formats.diff_text import render_document_text
from fusiondiff.report.interface import DiffReport
from fusiondiff.report.views.block_view import block_section
from fusiondiff.report.views.document import build_document
from fusiondiff.report.views.environment_view import conditions_text
from fusiondiff.report.views.thunder_view import thunder_text


def render_diff_terminal(report: DiffReport, width: int | None = None) -> str:
    """The four (Thunder's figures last, where a side has them), no line wider than ``width`` (the terminal's; 100 columns when piped)."""
    return (
        render_document_text(build_document(report.result, report, report.selection), report.result, width)
        + block_section(report, width)
        + conditions_text(report, width)
        + thunder_text(report, width)
    )
