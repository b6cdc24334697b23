"""Kernel records from torch.profiler (Kineto over CUPTI).

Each sample runs inside ``record_function("fusiondiff/sample/<i>")``. A kernel belongs to sample i
when the CUDA runtime or driver call that launched it (linked by the ``correlation`` id) happened on
the sampling thread inside that range. This attributes kernels exactly, whatever else the GPU runs,
and keeps the flush kernel (launched before the range) out of the fusion's time.

Two CUPTI conflicts are real (see the stack notes): CUPTI takes one subscriber, so after nvFuser's
``PythonProfiler`` ran in a process, Kineto silently delivers no kernel events. Every profiled
window therefore launches a canary kernel; if it is missing, the run is refused instead of
recording zeros.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from typing import Any

from fusiondiff.recording import cupti_owner
from fusiondiff.recording.gpu_activity import SAMPLE_PREFIX, with_other_work
from fusiondiff.recording.timing import KernelEvent, KernelSource, SampledRun
from fusiondiff.records.errors import ProfilerError
from fusiondiff.records.model import KINETO, LaunchConfig

CANARY_RANGE = "fusiondiff/canary"
_LAUNCH_CATEGORIES = ("cuda_runtime", "cuda_driver")

CUPTI_MISSING = (
    "CUPTI delivered no kernel events (the canary kernel is missing): another CUPTI subscriber holds "
    "it in this process, typically nvFuser's PythonProfiler; run the capture in a fresh process"
)


def _dims(value: Any) -> tuple[int, int, int]:
    if isinstance(value, (list, tuple)) and len(value) == 3:
        return (int(value[0]), int(value[1]), int(value[2]))
    return (0, 0, 0)


def launch_from_args(args: dict[str, Any]) -> LaunchConfig:
    """A kernel's launch configuration from a Kineto event's ``args`` (grid, block, cluster, shared
    memory, registers per thread). Where Kineto wrote no grid or block they are ``(0, 0, 0)``; the
    other fields are ``None`` then."""
    smem = args.get("shared memory")
    regs = args.get("registers per thread")
    cluster = args.get("cluster")
    return LaunchConfig(
        grid=_dims(args.get("grid")),
        block=_dims(args.get("block")),
        cluster=_dims(cluster) if cluster is not None else None,
        shared_mem_bytes=int(smem) if smem is not None else None,
        registers_per_thread=int(regs) if regs is not None else None,
    )


def kernel_event(kernel: dict[str, Any]) -> KernelEvent:
    """One ``kernel`` event of an exported Kineto trace (``cat == "kernel"``) as a :class:`KernelEvent`."""
    args = kernel.get("args", {})
    return KernelEvent(
        name=kernel["name"],
        start_ns=kernel["ts"] * 1000.0,
        # Kineto writes microseconds with three decimals: round to whole ns
        duration_ns=float(round(kernel["dur"] * 1000.0)),
        launch=launch_from_args(args),
        stream=args.get("stream"),
    )


def parse_trace(trace: dict[str, Any], sample_count: int) -> SampledRun:
    """Split an exported Kineto chrome trace into the kernels of each ``fusiondiff/sample/<i>`` range.

    Only launches made on the thread that opened a range (Kineto's ``tid``) count for it.
    """
    events = trace.get("traceEvents", [])
    ranges: dict[int, tuple[float, float, Any]] = {}
    canary: tuple[float, float, Any] | None = None
    launches: list[dict[str, Any]] = []
    kernels: dict[int, dict[str, Any]] = {}
    copies = 0
    for e in events:
        cat, name = e.get("cat"), e.get("name", "")
        if cat == "user_annotation" and name.startswith(SAMPLE_PREFIX):
            ranges[int(name[len(SAMPLE_PREFIX) :])] = (e["ts"], e["ts"] + e["dur"], e.get("tid"))
        elif cat == "user_annotation" and name == CANARY_RANGE:
            canary = (e["ts"], e["ts"] + e["dur"], e.get("tid"))
        elif cat in _LAUNCH_CATEGORIES and "correlation" in e.get("args", {}):
            launches.append(e)
        elif cat == "kernel":
            kernels[e["args"]["correlation"]] = e
        elif cat in ("gpu_memcpy", "gpu_memset"):
            copies += 1
    missing = [i for i in range(sample_count) if i not in ranges]
    if missing:
        raise ProfilerError(f"profiler trace lacks sample ranges {missing[:5]}: the profiler lost events")

    def kernels_in(start: float, end: float, tid: Any) -> list[dict[str, Any]]:
        found = []
        for launch in launches:
            if tid is not None and launch.get("tid") != tid:
                continue
            if start <= launch["ts"] <= end:
                kernel = kernels.get(launch["args"]["correlation"])
                if kernel is not None:
                    found.append(kernel)
        return sorted(found, key=lambda k: k["ts"])

    if canary is not None and not kernels_in(*canary):
        raise ProfilerError(CUPTI_MISSING)
    if not kernels:
        raise ProfilerError(CUPTI_MISSING)
    samples = [tuple(kernel_event(k) for k in kernels_in(*ranges[i])) for i in range(sample_count)]
    warnings = []
    if copies:
        warnings.append(f"{copies} memcpy/memset events ran during the profiled window (not counted as kernels)")
    return SampledRun(samples=tuple(samples), warnings=tuple(warnings))


def profiler_active() -> bool:
    """Whether a torch profiler is already running in this process (ours cannot nest in it)."""
    import torch

    return bool(torch.autograd.profiler._is_profiler_enabled)


def exported_trace(prof: Any) -> dict[str, Any]:
    """A stopped ``torch.profiler.profile``'s trace, exported as Kineto's chrome trace and read back."""
    fd, path = tempfile.mkstemp(prefix="fusiondiff-kineto-", suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace: dict[str, Any] = json.load(f)
    finally:
        os.unlink(path)
    return trace


class KinetoSource(KernelSource):
    """Per-kernel device durations and launch configurations from torch.profiler."""

    name = KINETO

    def __init__(self, canary: Callable[[], None]):
        self._canary = canary

    def sample(self, run_once: Callable[[], object], before_sample: Callable[[], None], count: int) -> SampledRun:
        import torch
        from torch.profiler import ProfilerActivity, profile, record_function

        if profiler_active():
            raise ProfilerError("a torch profiler is already running; fusiondiff cannot time inside it")
        # refused before starting where nvFuser's profiler holds CUPTI; the canary still checks
        cupti_owner.claim(self.name)
        activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
        with profile(activities=activities) as prof:
            with record_function(CANARY_RANGE):
                self._canary()
            torch.cuda.synchronize()
            for i in range(count):
                before_sample()
                with record_function(f"{SAMPLE_PREFIX}{i}"):
                    run_once()
                torch.cuda.synchronize()
        trace = exported_trace(prof)
        # launches are taken from the thread that opened the sample ranges (Kineto's tid)
        try:
            return with_other_work(parse_trace(trace, count), trace)
        except ProfilerError as exc:
            if str(exc) == CUPTI_MISSING:
                cupti_owner.held_by_other()
            raise
