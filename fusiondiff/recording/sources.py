"""The kernel-record sources, by the timer name that selects them (``TimingProtocol.method``).

One entry per :data:`fusiondiff.records.model.TimerName`: a new source is a :class:`KernelSource` subclass
in its own module, named here and in :data:`fusiondiff.recording.cupti_owner.SUBSCRIBER_OF_SOURCE`.
The recorder takes its source from here unless one is given to it
(:class:`fusiondiff.recording.recorder.Recorder`'s ``kernel_source``), as tests give scripted ones.
"""

from __future__ import annotations

from collections.abc import Callable

from fusiondiff.recording.kineto import KinetoSource
from fusiondiff.recording.nvfuser_profiler import NvfuserProfilerSource
from fusiondiff.recording.seed_method import SeedMethodSource
from fusiondiff.recording.timing import KernelSource
from fusiondiff.records.errors import CaptureError
from fusiondiff.records.model import KINETO, NVFUSER, SEED_METHOD, TimerName

Canary = Callable[[], None]
"""Launches one small kernel: a source that checks CUPTI delivers events launches it in its window."""

KERNEL_SOURCES: dict[TimerName, Callable[[Canary], KernelSource]] = {
    KINETO: KinetoSource,
    NVFUSER: lambda canary: NvfuserProfilerSource(),
    SEED_METHOD: lambda canary: SeedMethodSource(),
}
"""Timer name -> how to make its source (given the recorder's canary)."""


def kernel_source_for(timer: str, canary: Canary) -> KernelSource:
    """A new source for ``timer``; :class:`CaptureError` naming the known ones for another name."""
    make = KERNEL_SOURCES.get(timer)  # type: ignore[call-overload]
    if make is None:
        *first, last = (repr(name) for name in KERNEL_SOURCES)
        raise CaptureError(f"unknown timing method {timer!r}: use {', '.join(first)} or {last}")
    return make(canary)
