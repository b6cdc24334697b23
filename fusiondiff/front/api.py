"""The library's calls that start from files: captures read, then diffed or reported.

The stages take records: :mod:`fusiondiff.diff` compares captures and :mod:`fusiondiff.report`
renders a :class:`~fusiondiff.report.interface.DiffReport`, and neither reads a file. Reading the
captures (:mod:`fusiondiff.io.store`) and their timeline files (:mod:`fusiondiff.io.timelines`),
and naming each side by its path is done here, once, for the command line, the notebook and the
demo (the ranks' files are found by :mod:`fusiondiff.io.captures`).

Imports stay inside the functions: the command line imports this module while it starts, before
it handles Ctrl-C.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fusiondiff.diff.ranks import RankCapture
    from fusiondiff.diff.records import DiffResult
    from fusiondiff.report.interface import DiffReport


def diff_files(path_a: str | os.PathLike[str], path_b: str | os.PathLike[str]) -> DiffResult:
    """Read two capture files and :func:`~fusiondiff.diff.diff` them (A is usually live, B the replay)."""
    from fusiondiff.diff.core import diff
    from fusiondiff.io.captures import given_path
    from fusiondiff.io.store import load_capture
    from fusiondiff.report.words.paths import source_label

    path_a, path_b = given_path(path_a, "diff_files"), given_path(path_b, "diff_files")

    a, b = load_capture(path_a), load_capture(path_b)
    return diff(
        a, b, source_a=source_label(path_a, a.source, whole=True), source_b=source_label(path_b, b.source, whole=True)
    )


def open_report(inputs: Sequence[str | os.PathLike[str]]) -> DiffReport:
    """The report of two capture files (diffed now, their timeline files read too) or of one diff
    record written before (:mod:`fusiondiff.report.formats.record`)."""
    from fusiondiff.io.captures import given_paths
    from fusiondiff.io.store import load_capture, read_json
    from fusiondiff.records.errors import ReportError
    from fusiondiff.report.formats.record import is_diff_record, report_from_record

    inputs = given_paths(inputs, "open_report")
    if len(inputs) == 1:
        path = Path(inputs[0])
        data = read_json(path, "a fusiondiff diff record")
        if not is_diff_record(data):
            raise ReportError(
                f"{path} is not a diff record: give two captures (`fusiondiff report live.json replay.json`), "
                "or a record written by `fusiondiff report A B --format json -o diff.json`"
            )
        return report_from_record(data, str(path))
    if len(inputs) != 2:
        raise ReportError(f"report takes two capture files or one diff record, not {len(inputs)} file(s)")
    a, b = load_capture(inputs[0]), load_capture(inputs[1])
    from fusiondiff.diff.core import diff
    from fusiondiff.io.captures import given_paths
    from fusiondiff.io.timelines import load_arrays
    from fusiondiff.report.interface import DiffReport
    from fusiondiff.report.words.paths import display_paths, source_label

    path_a, path_b = display_paths(inputs)
    arrays_a, arrays_b = load_arrays(inputs[0], a), load_arrays(inputs[1], b)
    result = diff(a, b, source_a=source_label(path_a, a.source), source_b=source_label(path_b, b.source))
    return DiffReport(result, a, b, path_a, path_b, arrays_a=arrays_a, arrays_b=arrays_b)


def load_rank_captures(items: Sequence[str | os.PathLike[str]]) -> list[RankCapture]:
    """The per-rank captures of ``fusiondiff ranks`` (:func:`read_rank_captures`), two or more."""
    from fusiondiff.diff.ranks import RankCapture
    from fusiondiff.io.captures import given_paths, read_rank_captures
    from fusiondiff.records.errors import DiffError

    read = read_rank_captures(given_paths(items, "load_rank_captures"))
    if len(read) < 2:
        raise DiffError("`fusiondiff ranks` needs the captures of two or more ranks")
    return [RankCapture(rank=rank, path=str(path), capture=capture) for rank, path, capture in read if rank is not None]
