"""The live captures a round trip starts from, read with their ranks."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from fusiondiff.io.captures import given_path, given_paths, read_rank_captures
from fusiondiff.records.errors import FusionDiffError
from fusiondiff.records.model import Capture
from fusiondiff.roundtrip.records import LiveSource


def load_live_sources(items: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[LiveSource]:
    """The live captures a round trip starts from: one file, or the per-rank files of one torchrun
    session (:func:`read_rank_captures`). Raises :class:`FusionDiffError` for a capture that is not
    live or holds no fusions."""
    from fusiondiff.roundtrip.records import LiveSource

    def check(path: Path, capture: Capture) -> None:
        if capture.kind != "live":
            raise FusionDiffError(f"{path} is a {capture.kind} capture: the round trip starts from a live one")
        if not capture.fusions:
            raise FusionDiffError(f"{path} holds no fusions: nothing to replay")

    named = (
        [given_path(items, "roundtrip")] if isinstance(items, (str, os.PathLike)) else given_paths(items, "roundtrip")
    )
    sources, first = [], 0
    for rank, path, capture in read_rank_captures(named, check):
        sources.append(LiveSource(rank=rank, path=path, capture=capture, first=first))
        first += len(capture.fusions)
    return sources
