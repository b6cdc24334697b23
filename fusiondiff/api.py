"""The library's calls that start from files: captures read, then diffed or reported.

The stages take records: :mod:`fusiondiff.diff` compares captures and :mod:`fusiondiff.report`
renders a :class:`~fusiondiff.report.interface.DiffReport`, and neither reads a file. Reading the
captures (:mod:`fusiondiff.store`) and their timeline files (:mod:`fusiondiff.blocks.storage`),
naming each side by its path, and reading the captures of several ranks is done here, once, for
the command line, the notebook, the demo and the round trip.

Imports stay inside the functions: the command line imports this module while it starts, before
it handles Ctrl-C.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fusiondiff.diff.ranks import RankCapture
    from fusiondiff.diff.records import DiffResult
    from fusiondiff.model import Capture
    from fusiondiff.report.interface import DiffReport
    from fusiondiff.roundtrip.records import LiveSource

RANK_FILE = "NAME.rank<N>.json"
"""How the files of one torchrun session's ranks are named (:func:`fusiondiff.distributed.rank_of_path`)."""


def source_label(path: str | os.PathLike[str], source: str | None, *, whole: bool = False) -> str:
    """How a diff names a side read from ``path``: the path as given, then what the capture ran
    (:attr:`Capture.source`) with the recording machine's absolute paths cut and a long list of
    scripts shortened (:mod:`fusiondiff.report.paths`), as reports show it. ``whole`` keeps what it
    ran as recorded (:func:`diff_files` and the round trip's diff record)."""
    if not source:
        return str(path)
    if not whole:
        from fusiondiff.report.paths import scrub_paths, short_list

        source = short_list(scrub_paths(source))
    return f"{path} ({source})"


def _paths(items: object, call: str, least: int = 1) -> list[Path]:
    """``items`` as a list of file paths, or a :class:`FusionDiffError` in one line: a string where
    a list belongs was once taken for its characters, each a file name."""
    from fusiondiff.errors import FusionDiffError

    if isinstance(items, (str, bytes, os.PathLike)):
        raise FusionDiffError(f"{call} takes a list of paths, not one path: {call}([{str(items)[:60]!r}])")
    try:
        listed = list(items)  # type: ignore[call-overload]
    except TypeError:
        raise FusionDiffError(f"{call} takes a list of paths, not {type(items).__name__}") from None
    for item in listed:
        if not isinstance(item, (str, os.PathLike)) or not str(item):
            raise FusionDiffError(f"{call} takes paths (str or Path), not {type(item).__name__} {str(item)[:40]!r}")
    if len(listed) < least:
        raise FusionDiffError(f"{call} needs at least {least} path(s), not {len(listed)}")
    return [Path(item) for item in listed]


def _path(item: object, call: str) -> Path:
    from fusiondiff.errors import FusionDiffError

    if not isinstance(item, (str, os.PathLike)) or not str(item):
        raise FusionDiffError(f"{call} takes a path (str or Path), not {type(item).__name__} {str(item)[:40]!r}")
    return Path(item)


def diff_files(path_a: str | os.PathLike[str], path_b: str | os.PathLike[str]) -> DiffResult:
    """Read two capture files and :func:`~fusiondiff.diff.diff` them (A is usually live, B the replay)."""
    from fusiondiff.diff.core import diff
    from fusiondiff.store import load_capture

    path_a, path_b = _path(path_a, "diff_files"), _path(path_b, "diff_files")

    a, b = load_capture(path_a), load_capture(path_b)
    return diff(
        a, b, source_a=source_label(path_a, a.source, whole=True), source_b=source_label(path_b, b.source, whole=True)
    )


def open_report(inputs: Sequence[str | os.PathLike[str]]) -> DiffReport:
    """The report of two capture files (diffed now, their timeline files read too) or of one diff
    record written before (:mod:`fusiondiff.report.record`)."""
    from fusiondiff.errors import ReportError
    from fusiondiff.report.record import is_diff_record, report_from_record
    from fusiondiff.store import load_capture, read_json

    inputs = _paths(inputs, "open_report")
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
    from fusiondiff.blocks.storage import load_arrays
    from fusiondiff.diff.core import diff
    from fusiondiff.report.interface import DiffReport
    from fusiondiff.report.paths import display_paths

    path_a, path_b = display_paths(inputs)
    arrays_a, arrays_b = load_arrays(inputs[0], a), load_arrays(inputs[1], b)
    result = diff(a, b, source_a=source_label(path_a, a.source), source_b=source_label(path_b, b.source))
    return DiffReport(result, a, b, path_a, path_b, arrays_a=arrays_a, arrays_b=arrays_b)


def rank_capture_paths(items: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """The capture files named: a folder stands for its ``*.rank<N>.json`` files."""
    from fusiondiff.distributed import rank_of_path
    from fusiondiff.errors import DiffError

    paths: list[Path] = []
    for p in _paths(items, "rank_capture_paths"):
        if p.is_dir():
            found = sorted(q for q in p.iterdir() if rank_of_path(q) is not None and q.is_file())
            if not found:
                raise DiffError(f"{p}: no per-rank capture ({RANK_FILE}) in this folder")
            paths += found
        else:
            paths.append(p)
    return paths


def read_rank_captures(
    items: Sequence[str | os.PathLike[str]], check: Callable[[Path, Capture], None] | None = None
) -> list[tuple[int | None, Path, Capture]]:
    """The captures named (files, or folders of ``NAME.rank<N>.json``), each with its rank: the
    one its environment records, else the one in its file name. ``check`` sees each capture as it
    is read. One capture may have no rank; several are the ranks of one torchrun session, returned
    in rank order, and a :class:`DiffError` refuses one without a rank or a rank given twice."""
    from fusiondiff.distributed import rank_of_path
    from fusiondiff.errors import DiffError
    from fusiondiff.store import load_capture

    read = []
    for path in rank_capture_paths(items):
        capture = load_capture(path)
        if check is not None:
            check(path, capture)
        rank = capture.environment.rank if capture.environment.rank is not None else rank_of_path(path)
        read.append((rank, path, capture))
    if len(read) < 2:
        return read
    nameless = [path for rank, path, _ in read if rank is None]
    if nameless:
        raise DiffError(
            f"{nameless[0]}: no rank recorded and none in its name ({RANK_FILE}); several captures are "
            "taken as the ranks of one torchrun session"
        )
    twice = sorted(r for r, n in Counter(rank for rank, _, _ in read).items() if r is not None and n > 1)
    if twice:
        names = ", ".join(str(path) for rank, path, _ in read if rank == twice[0])
        raise DiffError(f"rank {twice[0]} is given twice ({names}): name each rank's capture once")
    return sorted(read, key=lambda item: item[0] if item[0] is not None else -1)


def load_rank_captures(items: Sequence[str | os.PathLike[str]]) -> list[RankCapture]:
    """The per-rank captures of ``fusiondiff ranks`` (:func:`read_rank_captures`), two or more."""
    from fusiondiff.diff.ranks import RankCapture
    from fusiondiff.errors import DiffError

    read = read_rank_captures(_paths(items, "load_rank_captures"))
    if len(read) < 2:
        raise DiffError("`fusiondiff ranks` needs the captures of two or more ranks")
    return [RankCapture(rank=rank, path=str(path), capture=capture) for rank, path, capture in read if rank is not None]


def load_live_sources(items: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[LiveSource]:
    """The live captures a round trip starts from: one file, or the per-rank files of one torchrun
    session (:func:`read_rank_captures`). Raises :class:`FusionDiffError` for a capture that is not
    live or holds no fusions."""
    from fusiondiff.errors import FusionDiffError
    from fusiondiff.roundtrip.records import LiveSource

    def check(path: Path, capture: Capture) -> None:
        if capture.kind != "live":
            raise FusionDiffError(f"{path} is a {capture.kind} capture: the round trip starts from a live one")
        if not capture.fusions:
            raise FusionDiffError(f"{path} holds no fusions: nothing to replay")

    named = [_path(items, "roundtrip")] if isinstance(items, (str, os.PathLike)) else _paths(items, "roundtrip")
    sources, first = [], 0
    for rank, path, capture in read_rank_captures(named, check):
        sources.append(LiveSource(rank=rank, path=path, capture=capture, first=first))
        first += len(capture.fusions)
    return sources
