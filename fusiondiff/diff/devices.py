"""Where a capture ran: its own GPU, and its fusions described relative to it.

A capture records the CUDA ordinal each fusion ran on (``device_index``, ``cuda:1`` for rank 1 of a
torchrun session, or for a replay run with ``--device 1``). That ordinal says where the process
ran, not what nvFuser ran: another GPU model shows in the environment's ``gpu_name``, its clocks in
the clock fields. So the differ describes B's fusions on B's own device as if on A's own device
(:func:`on_device`) before it compares them; a fusion that ran on another device than the rest of
its capture keeps its index, and the diff reports that.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from fusiondiff.records.model import Capture, TensorMeta


def own_device(capture: Capture) -> int | None:
    """The device a capture ran on: recorded in its environment, else its fusions' usual device."""
    if capture.environment.cuda_device_index is not None:
        return capture.environment.cuda_device_index
    counts = Counter(f.device_index for f in capture.fusions)
    return counts.most_common(1)[0][0] if counts else None


def _moved_input(meta: TensorMeta, old: str, new: str) -> TensorMeta:
    return dataclasses.replace(meta, device=new) if meta.device == old else meta


def on_device(capture: Capture, device: int | None, reference: int | None) -> Capture:
    """``capture`` with its fusions on ``device`` (its own) described as on ``reference`` (the other
    side's own), inputs included; fusions on any other device are kept as they are."""
    if device is None or reference is None or device == reference:
        return capture
    old, new = f"cuda:{device}", f"cuda:{reference}"
    fusions = tuple(
        dataclasses.replace(f, device_index=reference, inputs=tuple(_moved_input(t, old, new) for t in f.inputs))
        if f.device_index == device
        else f
        for f in capture.fusions
    )
    return dataclasses.replace(capture, fusions=fusions)


def on_own_device_of(capture: Capture, reference: Capture) -> Capture:
    """``capture``'s fusions on its own device described as on ``reference``'s own device."""
    return on_device(capture, own_device(capture), own_device(reference))
