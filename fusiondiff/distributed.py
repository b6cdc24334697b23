"""Which rank of a multi-process session this process is, and where its capture goes.

torchrun (and ``torch.distributed.launch``) start one process per GPU and tell each its place
through ``RANK``, ``LOCAL_RANK`` and ``WORLD_SIZE``. Every rank runs the same script with the same
``-o live.json``, so each must write a file of its own (``live.rank0.json``, ``live.rank1.json``...):
one shared path would keep whichever rank wrote last, and lose the others without a word.

Nothing here imports torch: the names are read from the environment, and the process group is
read only where torch is already loaded (:func:`process_group_backend`).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RankInfo:
    """This process's place in a torchrun session, as its launcher set it."""

    rank: int
    """Global rank (``RANK``)."""
    local_rank: int
    """Rank on this host (``LOCAL_RANK``; the global rank when the launcher did not set it)."""
    world_size: int
    """Processes in the session (``WORLD_SIZE``)."""


def _int(environ: Mapping[str, str], name: str) -> int | None:
    try:
        value = int(environ[name])
    except (KeyError, ValueError):
        return None
    return value if value >= 0 else None


def rank_from_env(environ: Mapping[str, str] | None = None) -> RankInfo | None:
    """This process's rank, or None outside a multi-process session (no ``RANK``/``WORLD_SIZE``,
    or a world of one, which writes the plain file name)."""
    environ = os.environ if environ is None else environ
    rank, world = _int(environ, "RANK"), _int(environ, "WORLD_SIZE")
    if rank is None or world is None or world < 2 or rank >= world:
        return None
    local = _int(environ, "LOCAL_RANK")
    return RankInfo(rank=rank, local_rank=rank if local is None else local, world_size=world)


def rank_path(path: str | os.PathLike[str], rank: int) -> Path:
    """``live.json`` -> ``live.rank1.json`` (the tensors file follows: ``live.rank1.tensors.safetensors``)."""
    p = Path(path)
    suffix = p.suffix or ".json"
    stem = p.name[: -len(p.suffix)] if p.suffix else p.name
    return p.with_name(f"{stem}.rank{rank}{suffix}")


_RANK_NAME = re.compile(r"\.rank(\d+)\.json$")


def rank_of_path(path: str | os.PathLike[str]) -> int | None:
    """The rank a ``live.rank1.json`` name says, or None for another name."""
    match = _RANK_NAME.search(Path(path).name)
    return None if match is None else int(match[1])


def process_group_backend() -> str | None:
    """The default process group's backend (``nccl``, ``gloo``) when the session initialised one.

    Read only: a process group is never initialised here (that would block waiting for the other
    ranks), and torch is not imported for it when the session has not imported it.
    """
    if "torch" not in sys.modules:
        return None
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            return str(dist.get_backend())
    except Exception:  # noqa: BLE001 - the backend is evidence, never a reason to fail a capture
        return None
    return None
