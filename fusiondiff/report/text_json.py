"""The renderers of the two formats that are no document: ``text``, the terminal summary
(:func:`fusiondiff.report.diff_text.render_diff_text`), and ``json``, the diff record
(:mod:`fusiondiff.report.record`)."""

from __future__ import annotations

from fusiondiff.report.interface import DiffReport, Renderer


class TextRenderer(Renderer):
    name = "text"

    def render(self, report: DiffReport) -> str:
        from fusiondiff.report.blocks import block_section
        from fusiondiff.report.diff_text import render_diff_text
        from fusiondiff.report.environment_view import conditions_text
        from fusiondiff.report.thunder_view import thunder_text

        text = render_diff_text(report.result, None, report.selection)
        return text + block_section(report) + conditions_text(report) + thunder_text(report)


class JsonRenderer(Renderer):
    name = "json"

    def render(self, report: DiffReport) -> str:
        from fusiondiff.records.errors import ReportError
        from fusiondiff.report.record import dumps_diff_record

        if report.selection:
            raise ReportError(
                "the diff record is always whole: leave out --top, --fusion and --min-gap with --format json"
            )
        return dumps_diff_record(report)
