"""Which rank of a multi-process session this process is, and where its capture goes.

torchrun (and ``torch.distributed.launch``) start one process per GPU and tell each its place
through ``RANK``, ``LOCAL_RANK`` and ``WORLD_SIZE``. Every rank runs the same script with the same
``-o live.json``, so each must write a file of its own (``live.rank0.json``, ``live.rank1.json``...):
one shared path would keep whichever rank wrote last, and lose the others without a word.

Nothing here imports torch at import time: the names are read from the environment, and the
process group is read only where torch is already loaded (:func:`process_group_backend`).

Under a process group two more things matter while recording: NCCL's kernels may run in a profiled
window (:func:`is_communication_kernel`, :func:`communication_apart` keep them out of a fusion's
kernels and time), and a fusion must not wait for the whole device after it ran
(:func:`synchronize_own_work`), since NCCL's streams wait on the other ranks.
"""

from __future__ import annotations

import os
import re
import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar


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


# --------------------------------------------------------------------------------------------
# Communication kernels: NCCL's collectives, kept apart from fusion time

_COMMUNICATION_KERNEL = re.compile(r"^(?:void\s+)?(?:\w+::)*(?:ncclDevKernel|ncclKernel|nvshmem)")
"""NCCL's kernels (``ncclKernel_*`` before NCCL 2.19, ``ncclDevKernel_*`` since) and NVSHMEM's."""


COMMUNICATION_NOT_RECORDED = "communication kernels not recorded"
"""How a capture's warning starts when its rank's collectives were not recorded
(:mod:`fusiondiff.recording.communication`): about the session, not about the fusions' timing."""


def is_communication_kernel(name: str) -> bool:
    """Whether a kernel is a collective's (``ncclDevKernel_AllReduce_Sum_bf16_RING_LL(...)``), not
    a fusion's: under DDP or FSDP such kernels can run inside a profiled window."""
    return _COMMUNICATION_KERNEL.match(name) is not None


class _Kernel(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def duration_ns(self) -> float: ...


K = TypeVar("K", bound=_Kernel)


def communication_apart(samples: Sequence[Sequence[K]]) -> tuple[tuple[tuple[K, ...], ...], str | None]:
    """Each sample's kernels without the communication kernels, and one line saying which were
    kept apart (``None`` when there were none). A collective's kernel is never a fusion's kernel
    and never part of its time: it waits on the other ranks, so its duration is theirs as much as ours."""
    kept: list[tuple[K, ...]] = []
    apart: dict[str, list[float]] = {}
    for sample in samples:
        kept.append(tuple(k for k in sample if not is_communication_kernel(k.name)))
        for k in sample:
            if is_communication_kernel(k.name):
                apart.setdefault(k.name.split("(", 1)[0], []).append(k.duration_ns)
    if not apart:
        return tuple(kept), None
    parts = [
        f"{name} x{len(durations)} (median {statistics.median(durations) / 1000:.2f} us)"
        for name, durations in sorted(apart.items())
    ]
    return tuple(kept), (
        "communication kernels ran in the sampled window, recorded here and kept apart from the "
        f"fusion's kernels and time: {', '.join(parts)}"
    )


def synchronize_own_work() -> None:
    """Wait for the work this thread queued on the GPU, and no more.

    Under an initialised process group, NCCL's streams hold collectives that finish only when the
    other ranks reach them: a device-wide ``torch.cuda.synchronize()`` after a fusion would wait on
    the other ranks. The fusion ran on this thread's current stream, so waiting for that stream is
    enough to surface its faults (an illegal address is reported by any later CUDA call on the
    context). Outside a process group, the whole device as before.
    """
    import torch

    _synchronize(torch.cuda, grouped=process_group_backend() is not None)


def _synchronize(cuda: Any, grouped: bool) -> None:
    if grouped:
        cuda.current_stream().synchronize()
    else:
        cuda.synchronize()
