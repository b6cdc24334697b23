"""The session's collectives (NCCL's kernels) during a rank's capture block, recorded apart from
fusion time (issue #17).

Under torchrun a rank times its fusions when the capture block ends (``live.timing_mode``), so no
collective ever lands in a timed sample, and without this module none would be recorded at all.
:func:`communication_trace` runs torch.profiler with CUDA activity only across the capture block
and keeps, from its kernels, only the communication kernels
(:func:`fusiondiff.records.distributed.is_communication_kernel`), one :class:`CommunicationKernel` per
kernel name. It never times anything and never waits on a collective while the block runs.

What it must never do is change the session: anything that stops it from starting (``--timer
nvfuser``, CUPTI held by nvFuser's profiler, a torch profiler already running, an error from
torch) becomes one warning line on the capture, and the session goes on without it. Two known
limits: a torch profiler the user's script starts *inside* the capture block cannot nest in this
one (torch refuses a second profiler), so under torchrun such a script needs ``fusiondiff capture
--no-communication``; and the profiler's buffers grow with the session's kernel count (a long
training run: turn it off the same way).
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from fusiondiff.recording import cupti_owner
from fusiondiff.recording.kineto import exported_trace, kernel_event, launch_from_args
from fusiondiff.recording.timing import KernelEvent
from fusiondiff.records import distributed
from fusiondiff.records.errors import ProfilerError, exception_line
from fusiondiff.records.model import KINETO, CommunicationKernel, LaunchConfig, TimerName

MAX_SAMPLES = 10_000
"""Per kernel name, the calls whose durations are kept (the first ones); ``calls`` and ``total_ns``
count them all. A long training run launches an all-reduce per bucket per step."""

NOT_RECORDED = distributed.COMMUNICATION_NOT_RECORDED
"""How each warning of this module starts."""


@dataclass
class CommunicationTrace:
    """What :func:`communication_trace` yields; ``kernels`` and ``warning`` are set when the block ends."""

    active: bool = False
    """Whether the profiler ran across the block."""
    kernels: tuple[CommunicationKernel, ...] = ()
    """The communication kernels seen, one record per name, sorted by name."""
    warning: str | None = None
    """Why they were not recorded (or not all read), in one line; ``None`` when nothing went wrong
    or nothing was asked."""


def _short_name(name: str) -> str:
    return name.split("(", 1)[0].strip()


def communication_kernels(
    events: Iterable[KernelEvent], max_samples: int = MAX_SAMPLES
) -> tuple[CommunicationKernel, ...]:
    """The communication kernels among ``events`` (any kernels, in any order), one record per short
    name: calls, each call's duration in start order (the first ``max_samples``), their total, the
    first call's stream and launch. Other kernels are ignored."""
    by_name: dict[str, list[KernelEvent]] = {}
    for event in events:
        if distributed.is_communication_kernel(event.name):
            by_name.setdefault(_short_name(event.name), []).append(event)
    records = []
    for name, calls in sorted(by_name.items()):
        calls.sort(key=lambda e: e.start_ns)
        first = calls[0]
        durations = [max(0.0, float(e.duration_ns)) for e in calls]
        known = {first.launch.grid, first.launch.block} - {None, (0, 0, 0)}  # (0, 0, 0): not in the trace
        launch = first.launch if known else None
        records.append(
            CommunicationKernel(
                name=name,
                calls=len(calls),
                samples_ns=tuple(durations[:max_samples]),
                total_ns=math.fsum(durations),
                stream=first.stream,
                launch=launch,
            )
        )
    return tuple(records)


_NO_LAUNCH = LaunchConfig(grid=None, block=None)


def _events_of_results(results: Any) -> Iterator[KernelEvent]:
    """The communication kernels among Kineto's results (``profile.profiler.kineto_results``),
    read without exporting the whole trace: a name test per event, and the launch (Kineto's
    metadata, the chrome trace's ``args``) read for the first call of each name only."""
    seen: set[str] = set()
    for event in results.events():
        name = event.name()
        if not distributed.is_communication_kernel(name):
            continue
        launch = _NO_LAUNCH
        short = _short_name(name)
        if short not in seen:
            seen.add(short)
            with contextlib.suppress(Exception):  # the launch is a detail: never lose the kernel for it
                args = json.loads("{" + (event.metadata_json() or "") + "}")
                if "grid" in args or "block" in args:
                    launch = launch_from_args(args)
        yield KernelEvent(
            name=name,
            start_ns=float(event.start_ns()),
            duration_ns=float(event.duration_ns()),
            launch=launch,
            stream=int(event.device_resource_id()),
        )


def _events_of_trace(trace: dict[str, Any]) -> Iterator[KernelEvent]:
    """The kernel events of an exported Kineto chrome trace (the slower path: the whole trace is written)."""
    for e in trace.get("traceEvents", []):
        if e.get("cat") == "kernel" and distributed.is_communication_kernel(e.get("name", "")):
            yield kernel_event(e)


def read_communication(prof: Any) -> tuple[CommunicationKernel, ...]:
    """The communication kernels of a stopped ``torch.profiler.profile``: from Kineto's results
    where this torch exposes them, else from its exported chrome trace."""
    results = getattr(getattr(prof, "profiler", None), "kineto_results", None)
    if results is not None and callable(getattr(results, "events", None)):
        try:
            found = communication_kernels(_events_of_results(results))
        except Exception:  # noqa: BLE001 - another torch's event API: the exported trace says the same
            found = None
        # none under NCCL is suspect (a torch whose results leave the device's events out): the
        # exported trace, slower, has them; elsewhere none is the common answer, taken as it is
        if found or found is not None and distributed.process_group_backend() != "nccl":
            return found
    return communication_kernels(_events_of_trace(exported_trace(prof)))


def _refusal(timer: TimerName) -> str | None:
    """Why the trace must not start in this process, or ``None``."""
    if not cupti_owner.starts_torch_profiler(timer):
        # after torch.profiler ran, nvFuser's PythonProfiler makes nvFuser exit the process (cupti_owner)
        return f"--timer {timer} uses nvFuser's PythonProfiler, and CUPTI takes one subscriber per process"
    if cupti_owner.torch_profiler_active():
        return "a torch profiler is already running in this process"
    try:
        cupti_owner.claim(KINETO)
    except ProfilerError as exc:
        return str(exc)
    return None


def _start() -> Any:
    import torch.profiler

    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA])
    try:
        prof.start()
    except BaseException:
        _stop(prof, keep=False)
        raise
    return prof


def _stop(prof: Any, keep: bool) -> None:
    """Stop the profiler. Leaving the block by an exception (``keep`` False), skip the device-wide
    synchronize torch does on stop: a collective the other ranks will never reach (one rank was
    interrupted) would hold it forever, and nothing of this trace is kept then."""
    inner = getattr(prof, "profiler", None)
    if not keep and inner is not None and hasattr(inner, "use_device"):
        inner.use_device = None
    with contextlib.suppress(Exception):  # a profiler that never started has nothing to stop
        prof.stop()


@contextlib.contextmanager
def communication_trace(enabled: bool = True, timer: TimerName = KINETO) -> Iterator[CommunicationTrace]:
    """Record the communication kernels run during the block, only under torchrun
    (:func:`fusiondiff.records.distributed.rank_from_env`) and when ``enabled``; elsewhere a no-op.

    ``timer`` is the capture's kernel-record source: under ``nvfuser`` nothing starts (CUPTI is
    nvFuser's profiler's). Whatever goes wrong in starting or reading, the block runs as it would
    have, and the handle's ``warning`` says why nothing (or not all) was recorded; the profiler is
    stopped whenever the block ends, exceptions and Ctrl-C included."""
    handle = CommunicationTrace()
    if not enabled or distributed.rank_from_env() is None:
        yield handle
        return
    refusal = _refusal(timer)
    if refusal is not None:
        handle.warning = f"{NOT_RECORDED}: {refusal}"
        yield handle
        return
    try:
        prof = _start()
    except Exception as exc:  # noqa: BLE001 - the session must not fail for want of this trace
        handle.warning = f"{NOT_RECORDED}: torch.profiler did not start ({type(exc).__name__}: {exception_line(exc)})"
        yield handle
        return
    handle.active = True
    finished = False
    try:
        yield handle
        finished = True
    finally:
        _stop(prof, keep=finished)
        handle.active = False
    try:
        handle.kernels = read_communication(prof)
    except Exception as exc:  # noqa: BLE001 - a trace that cannot be read costs the trace, not the capture
        handle.warning = (
            f"{NOT_RECORDED}: the profiler's events could not be read ({type(exc).__name__}: {exception_line(exc)})"
        )
