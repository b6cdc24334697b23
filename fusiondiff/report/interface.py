"""What every report renderer takes and gives: one :class:`DiffReport` in, one text out.

A renderer is a class with a ``name`` (its entry in the table of formats, which also holds its file
suffixes) and a pure ``render(report) -> str`` (pip-audit's format classes and pyinstrument's
renderers are the models). The table and the registry by name are in :mod:`fusiondiff.report`. Renderers choose words and units; the records keep numbers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from fusiondiff.diff.records import DiffResult, FusionPair, KernelPair
from fusiondiff.records.model import Capture, FusionRecord, KernelRecord


@dataclass(frozen=True)
class DiffReport:
    """A diff together with the two captures it was made from: what every report renders.

    The captures are needed beyond the :class:`DiffResult` for what the diff only names: the
    samples, launch configurations, definitions, CUDA sources and both environments."""

    result: DiffResult
    a: Capture
    """Side A (usually the live capture)."""
    b: Capture
    path_a: str | None = None
    """Where A's capture file is, as shown in reports: relative to the captures' folder
    (:func:`fusiondiff.report.words.paths.display_paths`), never an absolute path."""
    path_b: str | None = None
    selection: str = ""
    """Non-empty when the report was narrowed to some fusions (:mod:`fusiondiff.report.views.filters`):
    how, in one line, which every renderer shows next to the verdict."""
    arrays_a: Mapping[tuple[int, int], Any] = field(default_factory=dict)
    """A's measured CTA arrays (:class:`fusiondiff.io.timelines.KernelArrays`) by (fusion
    index, kernel order), where they were read: the block-level views draw them."""
    arrays_b: Mapping[tuple[int, int], Any] = field(default_factory=dict)
    _kernels: dict[tuple[str, int], dict[tuple[int, str], KernelRecord]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """Each fusion's kernel records by (launch order, name), built when first asked for: a report
    looks up every kernel of a fusion, and a scan per look-up was quadratic in its kernels."""

    def fusion_a(self, pair: FusionPair) -> FusionRecord:
        return self.a.fusions[pair.index_a]

    def fusion_b(self, pair: FusionPair) -> FusionRecord:
        return self.b.fusions[pair.index_b]

    def kernel_records(self, pair: FusionPair, kernel: KernelPair) -> tuple[KernelRecord, KernelRecord]:
        """The two kernel records a :class:`KernelPair` pairs (found by launch order)."""
        ka = self._kernel_index("A", pair.index_a, self.fusion_a(pair))[(kernel.order_a, kernel.name_a)]
        kb = self._kernel_index("B", pair.index_b, self.fusion_b(pair))[(kernel.order_b, kernel.name_b)]
        return ka, kb

    def kernel_at(self, pair: FusionPair, side: str, order: int) -> KernelRecord | None:
        """The first kernel of ``side``'s fusion of ``pair`` launched at ``order``, if any."""
        fusion = self.fusion_a(pair) if side == "A" else self.fusion_b(pair)
        index = pair.index_a if side == "A" else pair.index_b
        by_order = self._kernels.get((side + "#", index))
        if by_order is None:
            by_order = {}
            for k in fusion.kernels:
                by_order.setdefault((k.order, ""), k)
            self._kernels[(side + "#", index)] = by_order
        return by_order.get((order, ""))

    def _kernel_index(self, side: str, index: int, fusion: FusionRecord) -> dict[tuple[int, str], KernelRecord]:
        found = self._kernels.get((side, index))
        if found is None:
            found = {}
            for k in fusion.kernels:
                found.setdefault((k.order, k.name), k)
            self._kernels[(side, index)] = found
        return found


def verdict_sentence(result: DiffResult) -> str:
    """The kernel question's line (:func:`fusiondiff.report.words.questions.kernel_line`), the
    one-sentence verdict a notebook's ``repr`` gives."""
    from fusiondiff.report.words.questions import kernel_line

    return kernel_line(result)


class Renderer(ABC):
    """Turns a :class:`DiffReport` into one text (Markdown, HTML, JSON...). Never prints."""

    name: str
    """The ``--format`` value that selects it: its entry in :data:`fusiondiff.report.REPORT_FORMATS`,
    the one table of formats, file suffixes and descriptions."""

    @abstractmethod
    def render(self, report: DiffReport) -> str:
        """The whole output for ``report``."""

    def laid_out(self, width: int) -> Renderer:
        """The renderer for output shown ``width`` columns wide (a terminal): itself, but for a
        format whose lines are read there (text)."""
        return self

    def chunks(self, report: DiffReport) -> Iterator[str]:
        """The output for ``report`` in pieces that join to :meth:`render`'s text, for a writer that
        writes them as they come: a renderer whose output can reach the size of its input makes it
        piece by piece, so that it is never held whole."""
        yield self.render(report)
