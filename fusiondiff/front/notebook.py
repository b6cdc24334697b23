"""fusiondiff in a notebook: captures and diffs that show themselves, and pandas tables.

::

    import fusiondiff.front.notebook as fdn
    live = fdn.load("live.json")            # shows the capture (environment, fusions, kernels)
    d = fdn.diff("live.json", "replay.json")
    d                                       # verdict, findings, kernel table with plots, diffs
    d.to_dataframe("kernels")               # one row per matched kernel, times in us
    d.save("report.html")                   # or .md, or format="perfetto"

:func:`load` and :func:`diff` return thin wrappers around the records (``.capture``, ``.result``,
``.report``) with ``_repr_html_`` (the HTML report's fragment) and ``to_dataframe()``. pandas is
imported only by ``to_dataframe`` (``pip install 'fusiondiff[report]'``); nothing else here needs
more than fusiondiff itself. Times in the tables are in microseconds (``_us`` columns).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from fusiondiff.records.errors import ReportError
from fusiondiff.records.model import Capture
from fusiondiff.report.interface import DiffReport

if TYPE_CHECKING:
    import pandas

    from fusiondiff.diff.records import KernelPair, PropertyChange, TimingVerdict

CaptureTable = Literal["fusions", "kernels", "samples", "ctas", "traffic"]
DiffTable = Literal["fusions", "kernels", "samples", "findings", "ledger", "ctas", "traffic"]


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise ReportError("to_dataframe needs pandas: pip install 'fusiondiff[report]'") from None
    return pandas


def _us(ns: float | None) -> float | None:
    return None if ns is None or ns != ns else ns / 1000


def _dims(d: tuple[int, ...] | None) -> str | None:
    return None if d is None else "x".join(str(v) for v in d)


@dataclass(frozen=True)
class CaptureView:
    """A capture as a notebook shows it."""

    capture: Capture
    path: str | None = None
    """The file's name as shown (never the absolute path)."""
    arrays: Mapping[tuple[int, int], Any] = field(default_factory=dict)
    """The measured CTA arrays of its block timelines, where they were read (``ctas`` table)."""

    def _repr_html_(self) -> str:
        from fusiondiff.report.formats.html import capture_html

        return capture_html(self.capture, self.path)

    def __repr__(self) -> str:
        return f"<CaptureView {self.path or self.capture.kind}: {len(self.capture.fusions)} fusion(s)>"

    def to_dataframe(self, table: CaptureTable = "fusions") -> pandas.DataFrame:
        """``fusions``: one row per fusion; ``kernels``: one per kernel; ``samples``: one per
        sample of each kernel (long form, for plotting); ``traffic``: one per kernel (or fusion
        judged whole), its bytes, GB/s and share of the measured peak, nvFuser's own figures."""
        pd = _pandas()
        rows: list[dict[str, Any]] = []
        if table == "ctas":  # one row per measured CTA: which SM ran it, and when
            from fusiondiff.report.views.block_view import cta_rows

            return pd.DataFrame(list(cta_rows(None, self.capture, self.arrays)))
        if table == "traffic":
            from fusiondiff.report.views.traffic_data import dataframe_rows

            return pd.DataFrame(dataframe_rows(self.capture))
        for f in self.capture.fusions:
            if table == "fusions":
                rows.append(
                    {
                        "fusion": f.name,
                        "trace": f.trace,
                        "key": f.key,
                        "kernels": len(f.kernels),
                        "segments": "+".join(f.segmentation.schedulers),
                        "median_us": _us(f.timing.median_ns),
                        "iqr_us": _us(f.timing.iqr_ns),
                        "samples": f.timing.count,
                        "call_count": f.call_count,
                    }
                )
                continue
            for k in f.kernels:
                base = {"fusion": f.name, "trace": f.trace, "kernel": k.normalized_name}
                if table == "samples":
                    rows += [{**base, "sample": i, "duration_us": s / 1000} for i, s in enumerate(k.timing.samples_ns)]
                    continue
                rows.append(
                    {
                        **base,
                        "launched_as": k.name.split("(", 1)[0],
                        "scheduler": k.scheduler,
                        "order": k.order,
                        "median_us": _us(k.timing.median_ns),
                        "iqr_us": _us(k.timing.iqr_ns),
                        "samples": k.timing.count,
                        "grid": _dims(k.launch.grid),
                        "block": _dims(k.launch.block),
                        "registers_per_thread": k.launch.registers_per_thread,
                        "shared_mem_bytes": k.launch.shared_mem_bytes,
                    }
                )
        if table not in ("fusions", "kernels", "samples"):
            raise ReportError(f"unknown table {table!r}: fusions, kernels, samples, ctas or traffic")
        return pd.DataFrame(rows)


@dataclass(frozen=True)
class DiffView:
    """A diff (with its two captures) as a notebook shows it."""

    report: DiffReport

    @property
    def result(self):  # noqa: ANN201 - DiffResult, imported lazily by the type checker only
        return self.report.result

    @property
    def comparable(self) -> bool:
        return self.report.result.comparable

    @property
    def exit_code(self) -> int:
        """What ``fusiondiff diff`` would exit with (see :meth:`DiffResult.exit_code`)."""
        return self.report.result.exit_code()

    def passes(self, question: str) -> bool:
        """Whether ``kernel``, ``host`` or ``fidelity`` passes its gate (:meth:`DiffResult.passes`)."""
        return self.report.result.passes(question)

    def _repr_html_(self) -> str:
        from fusiondiff.report.formats.html import diff_html_fragment

        return diff_html_fragment(self.report)

    def __repr__(self) -> str:
        from fusiondiff.report.interface import verdict_sentence

        return f"<DiffView {self.report.path_a} vs {self.report.path_b}: {verdict_sentence(self.result)}>"

    def render(self, format: str = "md") -> str:  # noqa: A002 - the CLI's option name
        """The report as text in one of :data:`fusiondiff.report.FORMATS`."""
        from fusiondiff.report import render

        return render(format, self.report)

    def save(self, path: str | os.PathLike[str], format: str | None = None) -> Path:  # noqa: A002
        """Write the report; the format follows the file name as on the command line
        (:func:`fusiondiff.report.format_for_path`: ``.md``, ``.html``, ``.json`` for the diff
        record, ``.perfetto.json``...) unless given; a name ending in ``.gz`` is gzipped."""
        from fusiondiff.io.files import write_text
        from fusiondiff.report import format_for_path

        path = Path(path)
        write_text(path, self.render(format or format_for_path(path)))
        return path

    def to_dataframe(self, table: DiffTable = "fusions") -> pandas.DataFrame:
        """``fusions``: one row per matched fusion; ``kernels``: one per matched kernel;
        ``samples``: one per sample, side and kernel (long form); ``findings``: ranked findings (with
        their question); ``ledger``: each question's gap apportioned, one row per share;
        ``traffic``: each side's kernels against its own measured peak (a ``side`` column)."""
        from fusiondiff.report.words import wording

        pd = _pandas()
        report, result = self.report, self.report.result
        rows: list[dict[str, Any]] = []
        if table == "ctas":
            from fusiondiff.report.views.block_view import cta_rows

            rows = [*cta_rows("A", report.a, report.arrays_a), *cta_rows("B", report.b, report.arrays_b)]
        elif table == "traffic":
            from fusiondiff.report.views.traffic_data import dataframe_rows

            rows = [*dataframe_rows(report.a, "A"), *dataframe_rows(report.b, "B")]
        elif table == "findings":
            from fusiondiff.diff.ledger import status_of

            rows = [
                {
                    "rank": f.rank,
                    "question": f.question,
                    "rule": f.rule,
                    "role": f.role,
                    "title": wording.title(f),
                    "status": status_of(f),
                    "explained_us": _us(f.explained_ns),
                    "alone_us": _us(f.alone_ns),
                    "joint_with": ", ".join(f.joint_with),
                    "fusions": ", ".join(f.fusions),
                }
                for f in result.findings
            ]
        elif table == "ledger":
            rows = [
                {
                    "question": ledger.question,
                    "causes": " and ".join(causes),
                    "explained_us": _us(ns),
                    "fusions": ", ".join(fusions),
                }
                for ledger in result.ledgers
                for causes, ns, fusions in [
                    *((e.causes, e.explained_ns, e.fusions) for e in ledger.entries),
                    *(
                        [(("unexplained",), ledger.unexplained_ns, ledger.unexplained_fusions)]
                        if ledger.unexplained_ns > 0
                        else []
                    ),
                ]
            ]
        elif table == "samples":
            from fusiondiff.report.views.content import samples_of

            for fusion, kernel, a, b in samples_of(report):
                for side, samples in (("A", a), ("B", b)):
                    rows += [
                        {
                            "fusion": fusion,
                            "kernel": kernel or "(fusion)",
                            "side": side,
                            "sample": i,
                            "duration_us": s / 1000,
                        }
                        for i, s in enumerate(samples)
                    ]
        elif table in ("fusions", "kernels"):
            for pair in result.pairs:
                items: list[tuple[KernelPair | None, TimingVerdict, tuple[PropertyChange, ...]]]
                items = (
                    [(None, pair.timing, pair.changes)]
                    if table == "fusions"
                    else [(k, k.timing, k.changes) for k in pair.kernels]
                )
                for kernel_pair, t, changes in items:
                    row: dict[str, Any] = {"fusion": pair.label}
                    if kernel_pair is not None:
                        ka, kb = report.kernel_records(pair, kernel_pair)
                        row |= {
                            "kernel": kernel_pair.normalized_name,
                            "block_a": _dims(ka.launch.block),
                            "block_b": _dims(kb.launch.block),
                            "registers_a": ka.launch.registers_per_thread,
                            "registers_b": kb.launch.registers_per_thread,
                        }
                    else:
                        row |= {
                            "matched_by": pair.matched_by,
                            "kernels_a": len(report.fusion_a(pair).kernels),
                            "kernels_b": len(report.fusion_b(pair).kernels),
                        }
                    row |= {
                        "median_a_us": _us(t.median_a_ns),
                        "median_b_us": _us(t.median_b_ns),
                        "ratio": t.ratio,
                        "p_value": t.p_value,
                        "floor": t.floor,
                        "verdict": t.verdict,
                        "differs": ", ".join(c.path for c in changes),
                    }
                    rows.append(row)
        else:
            raise ReportError(f"unknown table {table!r}: fusions, kernels, samples, findings, ledger, ctas or traffic")
        return pd.DataFrame(rows)


def load(path: str | os.PathLike[str]) -> CaptureView:
    """Load a capture file for a notebook."""
    from fusiondiff.io.store import load_capture
    from fusiondiff.io.timelines import load_arrays

    capture = load_capture(path)
    return CaptureView(capture, Path(path).name, load_arrays(path, capture))


def _as_capture(item: str | os.PathLike[str] | Capture | CaptureView) -> tuple[Capture, str | None]:
    if isinstance(item, CaptureView):
        return item.capture, item.path
    if isinstance(item, Capture):
        return item, None
    view = load(item)
    return view.capture, view.path


def diff(
    a: str | os.PathLike[str] | Capture | CaptureView, b: str | os.PathLike[str] | Capture | CaptureView
) -> DiffView:
    """Diff two captures (files, loaded captures, or :class:`CaptureView`)."""
    from fusiondiff.front.api import open_report

    if all(isinstance(x, (str, os.PathLike)) for x in (a, b)):
        return DiffView(open_report([a, b]))  # type: ignore[list-item]
    from fusiondiff.diff import diff as diff_captures

    capture_a, path_a = _as_capture(a)
    capture_b, path_b = _as_capture(b)
    return DiffView(DiffReport(diff_captures(capture_a, capture_b), capture_a, capture_b, path_a, path_b))


def open_diff(path: str | os.PathLike[str]) -> DiffView:
    """A diff record written before (``fusiondiff report A B --format json -o diff.json``)."""
    from fusiondiff.front.api import open_report

    return DiffView(open_report([path]))
