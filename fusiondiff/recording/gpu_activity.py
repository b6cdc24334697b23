"""Other work of the recording process on the GPU while a fusion's samples ran, read from the same
Kineto trace that timed them (:mod:`fusiondiff.recording.kineto`).

CUPTI records every kernel, copy and memset of the process, whichever thread launched it. The
fusion's own are those launched by the thread that opened the sample ranges; every other device
event launched by another thread (a second stream kept busy by the session, a data loader's
copies) is other work. Each sample's window runs from its first kernel's start to its last
kernel's end; what matters is how much of each window other work overlapped, since kernels of two
streams share the SMs, the memory bandwidth and the power budget. Other processes are not in the
trace (CUPTI sees one process): NVML sees them (:mod:`fusiondiff.recording.device_watch`).

Pure functions of the trace's dict and the sampled kernels: tests feed them recorded or written
traces, no GPU needed.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

from fusiondiff.recording.timing import KernelEvent, SampledRun
from fusiondiff.records.conditions import MAX_OTHER_KERNELS, OtherKernel, OtherWork

SAMPLE_PREFIX = "fusiondiff/sample/"
"""The name of each sample's ``record_function`` range, followed by its index (Kineto's timer opens them)."""
_LAUNCHES = ("cuda_runtime", "cuda_driver")
_DEVICE = ("kernel", "gpu_memcpy", "gpu_memset")

Window = tuple[float, float]


def sample_windows(samples: Sequence[Sequence[KernelEvent]]) -> list[Window | None]:
    """Each sample's window in ns, from its first kernel's start to its last kernel's end (``None``
    for a sample that launched no kernel)."""
    windows: list[Window | None] = []
    for kernels in samples:
        if not kernels:
            windows.append(None)
            continue
        windows.append((min(k.start_ns for k in kernels), max(k.start_ns + k.duration_ns for k in kernels)))
    return windows


def _sampling_thread(events: Iterable[dict[str, Any]]) -> Any:
    for e in events:
        if e.get("cat") == "user_annotation" and str(e.get("name", "")).startswith(SAMPLE_PREFIX):
            return e.get("tid")
    return None


def _union_length(intervals: list[Window]) -> float:
    total, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total


def other_work(trace: dict[str, Any], samples: Sequence[Sequence[KernelEvent]]) -> OtherWork:
    """What other threads of the process ran on the device during the sample windows of
    ``samples`` (the kernels each sample launched, as the trace gave them)."""
    events = trace.get("traceEvents", [])
    sampler = _sampling_thread(events)
    own = {
        e["args"]["correlation"]
        for e in events
        if e.get("cat") in _LAUNCHES and "correlation" in e.get("args", {}) and e.get("tid") == sampler
    }
    others: list[tuple[float, float, dict[str, Any]]] = []
    for e in events:
        if e.get("cat") not in _DEVICE or e.get("args", {}).get("correlation") in own:
            continue
        start = float(e["ts"]) * 1000.0
        others.append((start, start + float(e.get("dur", 0.0)) * 1000.0, e))
    others.sort(key=lambda o: o[0])
    starts = [o[0] for o in others]
    fractions: list[float] = []
    per_kernel: dict[tuple[str, int | None], tuple[list[float], set[int]]] = {}
    copies: dict[int, float] = {}
    for window in sample_windows(samples):
        if window is None:
            continue
        low, high = window
        hits = [o for o in others[: bisect.bisect_left(starts, high)] if o[1] > low]
        clipped = [(max(s, low), min(t, high)) for s, t, _ in hits]
        length = high - low
        fractions.append(min(_union_length(clipped) / length, 1.0) if length > 0 else 0.0)
        for (s, t), (_, _, e) in zip(clipped, hits):
            if e.get("cat") == "kernel":
                key = (str(e.get("name", "")).split("(", 1)[0].strip(), e.get("args", {}).get("stream"))
                overlap, launches = per_kernel.setdefault(key, ([0.0], set()))
                overlap[0] += t - s
                launches.add(id(e))  # a launch counts once, however many windows it spans
            else:
                copies[id(e)] = copies.get(id(e), 0.0) + (t - s)
    ranked = sorted(per_kernel.items(), key=lambda kv: (-kv[1][0][0], kv[0][0]))
    kernels = tuple(
        OtherKernel(name=name, stream=stream, calls=len(launches), overlap_ns=overlap[0])
        for (name, stream), (overlap, launches) in ranked[:MAX_OTHER_KERNELS]
    )
    return OtherWork(
        overlap_fractions=tuple(fractions),
        kernels=kernels,
        kernels_left_out=max(len(ranked) - MAX_OTHER_KERNELS, 0),
        copies=len(copies),
        copy_overlap_ns=sum(copies.values()),
    )


def with_other_work(run: SampledRun, trace: dict[str, Any]) -> SampledRun:
    """``run`` with :attr:`SampledRun.other_work` read from its trace. Reading it must never cost
    the timing: a trace it cannot read leaves it unknown, with a warning saying why."""
    try:
        return dataclasses.replace(run, other_work=other_work(trace, run.samples))
    except Exception as exc:  # noqa: BLE001 - the samples stand without it
        note = f"other work on the GPU not read from the trace: {type(exc).__name__}: {exc}"
        return dataclasses.replace(run, warnings=(*run.warnings, note))
