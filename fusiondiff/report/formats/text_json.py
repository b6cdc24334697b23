"""The renderers of the two formats that are no document: ``text``, the terminal summary
(:func:`fusiondiff.report.formats.diff_text.render_diff_text`), and ``json``, the diff record
(:mod:`fusiondiff.report.formats.record`)."""

from __future__ import annotations

from collections.abc import Iterator

from fusiondiff.report.interface import DiffReport, Renderer


class TextRenderer(Renderer):
    name = "text"

    def __init__(self, width: int | None = None) -> None:
        self.width = width
        """The columns its lines are wrapped to; None: as long as they are (a file)."""

    def laid_out(self, width: int) -> Renderer:
        return TextRenderer(width)

    def render(self, report: DiffReport) -> str:
        from fusiondiff.report.terminal import render_diff_terminal

        return render_diff_terminal(report, self.width)


class JsonRenderer(Renderer):
    name = "json"

    def render(self, report: DiffReport) -> str:
        return "".join(self.chunks(report))

    def chunks(self, report: DiffReport) -> Iterator[str]:
        from fusiondiff.records.errors import ReportError
        from fusiondiff.report.formats.record import record_chunks

        if report.selection:
            raise ReportError(
                "the diff record is always whole: leave out --top, --fusion and --min-gap with --format json"
            )
        for chunk in record_chunks(report):
            yield chunk.decode()
