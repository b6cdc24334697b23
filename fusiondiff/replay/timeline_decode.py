"""A probe buffer read back: the header and one record per CTA turned into per-CTA arrays, checked.

The layout is :mod:`fusiondiff.replay.timeline_probe`'s. numpy only: the decoding is tested on CPU
with buffers as the H200 wrote them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from fusiondiff.io.timelines import compact
from fusiondiff.records.blocks import Refusal, RefusalCode
from fusiondiff.replay.timeline_probe import CTA_WORDS, HEADER_WORDS, Buffer, record_words


class Refused(Exception):
    """A kernel's timeline cannot be kept; :attr:`refusal` says why."""

    def __init__(self, code: RefusalCode, detail: str) -> None:
        super().__init__(detail)
        self.refusal = Refusal(code, detail)


@dataclass(frozen=True)
class Decoded:
    """One run of one kernel's buffer, as per-CTA arrays (absolute ``%globaltimer`` ns)."""

    start_ns: npt.NDArray[np.int64]
    end_ns: npt.NDArray[np.int64]
    sm: npt.NDArray[np.int64]
    sm_end: npt.NDArray[np.int64]
    cluster: npt.NDArray[np.int64] | None


def decode_buffer(words: npt.NDArray[np.int64], buffer: Buffer) -> Decoded:
    """One run's buffer (the header and one record per CTA) as arrays; :class:`Refused` when a
    CTA wrote no record, a warp no end, or the launch overflowed the records."""
    header = words[:HEADER_WORDS]
    if header[0] or header[2]:
        raise Refused("overflow", f"{int(header[0])} CTAs and {int(header[2])} warps beyond the recorded launch")
    if int(header[1]) != buffer.capacity:
        raise Refused(
            "not_instrumented" if header[1] == 0 else "launch_differs", f"CTA 0 saw a grid of {int(header[1])} CTAs"
        )
    records = words[HEADER_WORDS:].reshape(buffer.capacity, record_words(buffer.warps))
    start = records[:, 0]
    missing = int(np.count_nonzero(start == 0))
    if missing:
        raise Refused("missing_ctas", f"{missing} of {buffer.capacity} CTAs wrote no record")
    warp_ends = records[:, CTA_WORDS:]
    threads = int(header[3])
    warps = math.ceil(threads / 32)
    if not 0 < warps <= buffer.warps:
        raise Refused("launch_differs", f"CTA 0 saw blocks of {threads} threads")
    unended = int(np.count_nonzero(warp_ends[:, :warps] == 0))
    if unended:
        raise Refused("early_exit", f"{unended} warps left past the probe's end record")
    end = warp_ends[:, :warps].max(axis=1)
    sm = records[:, 1] & 0xFFFFFFFF
    cluster = records[:, 2] if buffer.cluster else None
    return Decoded(start, end, sm, records[:, 3] - 1, cluster)


def kernel_arrays(order: int, decoded: Sequence[Decoded]) -> dict[str, npt.NDArray[np.generic]]:
    start = np.stack([d.start_ns - d.start_ns.min() for d in decoded])
    end = np.stack([d.end_ns - d.start_ns.min() for d in decoded])
    sm = np.stack([d.sm for d in decoded])
    sm_end = np.stack([d.sm_end for d in decoded])
    out: dict[str, npt.NDArray[np.generic]] = {
        f"k{order}.start_ns": compact(start),
        f"k{order}.end_ns": compact(end),
        f"k{order}.sm": compact(sm, "I16"),
    }
    if (sm_end != sm).any():
        out[f"k{order}.sm_end"] = compact(sm_end, "I16")
    clusters = [d.cluster for d in decoded]
    if all(c is not None for c in clusters):
        out[f"k{order}.cluster"] = compact(np.stack(clusters))  # type: ignore[arg-type]
    return out
