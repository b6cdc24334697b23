"""Which captures, which fusions, which GPUs: a round trip's plan, before anything runs."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Sequence
from typing import Any

from fusiondiff.records.errors import FusionDiffError
from fusiondiff.records.model import Capture, FusionRecord
from fusiondiff.roundtrip.records import DistinctFusion, LiveSource


def combine_ranks(sources: Sequence[LiveSource]) -> Capture:
    """Every source's fusions in one capture, in rank order: the first source's environment, and
    each rank's fusions on its own device described as on the first rank's
    (:func:`fusiondiff.diff.devices.on_device`), so the same fusion on two ranks is one."""
    from fusiondiff.diff.devices import on_device, own_device

    if len(sources) == 1:
        return sources[0].capture
    reference = own_device(sources[0].capture)
    fusions = tuple(f for s in sources for f in on_device(s.capture, own_device(s.capture), reference).fusions)
    warnings = tuple(dict.fromkeys(w for s in sources for w in s.capture.warnings))
    label = " + ".join(s.path.name for s in sources)
    return dataclasses.replace(sources[0].capture, fusions=fusions, warnings=warnings, source=label)


def source_of(sources: Sequence[LiveSource], index: int) -> LiveSource:
    return next(s for s in reversed(sources) if s.first <= index)


def distinct_fusions(capture: Capture, ranks: Sequence[int | None] | None = None) -> list[DistinctFusion]:
    """Each distinct fusion of ``capture`` once, first occurrence first (see the module docstring);
    ``ranks`` gives each fusion's rank in a capture of several ranks (:func:`combine_ranks`)."""
    groups: dict[Any, list[int]] = {}
    for i, f in enumerate(capture.fusions):
        groups.setdefault(f.replay_key, []).append(i)
    return [
        DistinctFusion(
            index=members[0],
            members=tuple(members),
            stem=_stem(members[0], capture.fusions[members[0]], None if ranks is None else ranks[members[0]]),
        )
        for members in groups.values()
    ]


def _stem(index: int, f: FusionRecord, rank: int | None = None) -> str:
    """``<position>_<trace>_<name>`` (``<position>_rank<N>_<trace>_<name>`` for one of several
    ranks): unique by its position, sorted like the capture, and a file name whatever the
    capture's names hold."""
    where = "" if rank is None else f"rank{rank}_"
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{where}{f.trace or 'script'}_{f.name}")[:60]
    return f"{index:04d}_{name}"


def visible_devices() -> list[str | None]:
    """The GPUs a round trip may use: ``CUDA_VISIBLE_DEVICES`` when it is set, else torch's count
    (imported here only); ``[None]`` (one worker, the default device) when neither says."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        devices = [d.strip() for d in listed.split(",") if d.strip()]
        # nvidia's rule: the list stops at the first invalid entry; -1 hides every GPU
        valid = []
        for d in devices:
            if d.startswith("-"):
                break
            valid.append(d)
        return list(valid) or [None]
    try:
        import torch

        count = torch.cuda.device_count()
    except Exception:  # noqa: BLE001 - no torch, no driver: one worker on the default device
        count = 0
    return [str(i) for i in range(count)] or [None]


def choose_devices(indices: Sequence[int], visible: Sequence[str | None]) -> list[str | None]:
    """The GPUs ``--device`` names, as indices among the visible ones (``--device 1`` with
    ``CUDA_VISIBLE_DEVICES=2,3`` is GPU 3). Raises :class:`FusionDiffError` for one not visible."""
    usable = [d for d in visible if d is not None]
    chosen: list[str | None] = []
    for index in indices:
        if not 0 <= index < len(usable):
            have = "no GPU is visible" if not usable else f"the visible GPUs are 0-{len(usable) - 1}"
            raise FusionDiffError(f"--device {index}: {have}")
        if usable[index] not in chosen:
            chosen.append(usable[index])
    return chosen


def batches(items: Sequence[DistinctFusion], size: int) -> list[list[DistinctFusion]]:
    """``items`` in order, ``size`` at a time."""
    if size < 1:
        raise FusionDiffError("--batch needs a number of scripts per process, 1 or more")
    return [list(items[k : k + size]) for k in range(0, len(items), size)]


def isolation_words(batch: int) -> str:
    return "a fresh process per fusion" if batch == 1 else f"a fresh process per batch of {batch} fusions"


def device_words(devices: Sequence[str | None]) -> str:
    if devices == (None,) or list(devices) == [None]:
        return "the default device"
    return "GPU " + ", ".join(str(d) for d in devices)
