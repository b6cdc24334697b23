"""The captures named on a command line or in a call: paths checked as given, and the per-rank
files of one torchrun session found by their names and read in rank order."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from fusiondiff.records.distributed import rank_of_path
from fusiondiff.records.errors import DiffError, FusionDiffError

if TYPE_CHECKING:
    from fusiondiff.records.model import Capture

RANK_FILE = "NAME.rank<N>.json"
"""How the files of one torchrun session's ranks are named (:func:`fusiondiff.records.distributed.rank_of_path`)."""


def given_paths(items: object, call: str, least: int = 1) -> list[Path]:
    """``items`` as a list of file paths, or a :class:`FusionDiffError` in one line: a string where
    a list belongs was once taken for its characters, each a file name."""
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


def given_path(item: object, call: str) -> Path:
    if not isinstance(item, (str, os.PathLike)) or not str(item):
        raise FusionDiffError(f"{call} takes a path (str or Path), not {type(item).__name__} {str(item)[:40]!r}")
    return Path(item)


def rank_capture_paths(items: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """The capture files named: a folder stands for its ``*.rank<N>.json`` files."""

    paths: list[Path] = []
    for p in given_paths(items, "rank_capture_paths"):
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
    from fusiondiff.io.store import load_capture

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


def pooled(side: str, capture: Capture, others: Sequence[str], progress: Callable[[str], None]) -> Capture:
    """``capture`` with the timings of the same fusions in ``others`` (captures of its program in
    other processes, read here) pooled into it (:mod:`fusiondiff.records.processes`), said in one
    progress line naming ``side``."""
    if not others:
        return capture
    from fusiondiff.io.store import load_capture
    from fusiondiff.records.processes import pool

    joined = pool(capture, [load_capture(path) for path in others])
    left = f"; {joined.unmatched} record(s) of the others match none of its fusions" if joined.unmatched else ""
    progress(f"fusiondiff: {side} pooled from {joined.processes} processes{left}")
    return joined.capture
