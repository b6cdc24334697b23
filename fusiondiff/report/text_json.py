"""The renderers of the two formats that are no document: ``text``, the terminal summary
(:func:`fusiondiff.report.diff_text.render_diff_text`), and ``json``, the diff record
(:mod:`fusiondiff.report.record`)."""

from __future__ import annotations

from collections.abc import Iterator

from fusiondiff.report.interface import DiffReport, Renderer


class TextRenderer(Renderer):
    name = "text"

    def render(self, report: DiffReport) -> str:
        from fusiondiff.report.blocks import block_section
        from fusiondiff.report.diff_text import render_diff_text
        from fusiondiff.report.environment_view import conditions_text
        from fusiondiff.report.thunder_view import thunder_text

        text = render_diff_text(report.result) + block_section(report) + conditions_text(report) + thunder_text(report)
        return f"({report.selection})\n{text}" if report.selection else text


class JsonRenderer(Renderer):
    name = "json"

    def render(self, report: DiffReport) -> str:
        return "".join(self.chunks(report))

    def chunks(self, report: DiffReport) -> Iterator[str]:
        from fusiondiff.records.errors import ReportError
        from fusiondiff.report.record import record_chunks

        if report.selection:
            raise ReportError(
                "the diff record is always whole: leave out --top, --fusion and --min-gap with --format json"
            )
        for chunk in record_chunks(report):
            yield chunk.decode()
