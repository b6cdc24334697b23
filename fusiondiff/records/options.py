"""What a recording is asked to do, in one record: the CLI builds it, live capture and the replay
take it, the replay runner hands it to its child process as JSON (with the records' codec), and
the recorder reads it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from fusiondiff.records.codec import decode, to_jsonable
from fusiondiff.records.model import KINETO, NVFUSER, TimerName, TimingProtocol

TIMERS: tuple[TimerName, ...] = (KINETO, NVFUSER)
"""The kernel-record sources a user picks with ``--timer`` (``both`` runs each in its own process)."""
DEFAULT_TIMER: TimerName = KINETO


def timer_name(name: str) -> TimerName:
    """``name`` as one of :data:`TIMERS`; ``ValueError`` for another."""
    for timer in TIMERS:
        if name == timer:
            return timer
    raise ValueError(f"timer must be one of {TIMERS}, not {name!r}")


@dataclass(frozen=True)
class RecordingOptions:
    """The options of ``fusiondiff capture`` and ``fusiondiff replay`` that decide what is recorded."""

    protocol: TimingProtocol = field(default_factory=TimingProtocol)
    """How the samples are taken (warm-ups, samples, L2 mode); stored with the capture."""
    only: tuple[str, ...] = ()
    """Record only the fusions of these names (``nvFusion0``); empty: every fusion."""
    save_inputs: bool = False
    """Save each fusion's exact inputs (whole storages) in a safetensors file beside the capture."""
    cuda_source: bool = False
    """Record the CUDA source of each kernel, not only its hash."""
    communication: bool = True
    """Under torchrun, record the session's communication kernels (NCCL's) across the capture block,
    apart from fusion time (:mod:`fusiondiff.recording.communication`); ``--no-communication`` turns
    it off. Outside torchrun, and in a replay, nothing is traced either way."""
    peak: bool = True
    """Measure the GPU's DRAM bandwidth when recording ends (:mod:`fusiondiff.recording.peak`);
    ``--no-peak`` leaves ``Environment.peak_bandwidth`` empty."""
    sm_timeline: int = 0
    """Instrumented runs per kernel for the block-level timelines (``--sm-timeline``, which CTA
    ran on which SM and when: :mod:`fusiondiff.replay.timeline_recording`); 0: none recorded."""
    sm_timeline_max_overhead: float = 0.25
    """A timeline whose instrumented kernel is slower than the plain one by more than this
    fraction is refused (``--sm-timeline-max-overhead``, in percent on the command line)."""

    @property
    def timer(self) -> TimerName:
        """The kernel-record source that measures (the protocol's method)."""
        return self.protocol.method

    def with_timer(self, timer: str) -> RecordingOptions:
        """These options measured by ``timer`` (one of :data:`TIMERS`)."""
        return dataclasses.replace(self, protocol=dataclasses.replace(self.protocol, method=timer_name(timer)))

    def to_jsonable(self) -> Any:
        """The options as JSON-ready data (:func:`fusiondiff.records.codec.to_jsonable`)."""
        return to_jsonable(self)

    @classmethod
    def from_jsonable(cls, data: Any, where: str = "options") -> RecordingOptions:
        """The options back from :meth:`to_jsonable`'s data, decoded and checked like a capture's records."""
        return decode(data, cls, where)


def timer_outputs(output: str) -> dict[str, str]:
    """Where ``replay --timer both`` writes each timer's capture: OUTPUT for kineto, OUTPUT with
    ``.nvfuser.json`` for nvfuser."""
    stem, gz = (output[: -len(".gz")], ".gz") if output.endswith(".gz") else (output, "")
    stem = stem.removesuffix(".json")
    return {KINETO: output, NVFUSER: f"{stem}.nvfuser.json{gz}"}
