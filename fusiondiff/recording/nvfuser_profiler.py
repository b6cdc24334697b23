"""Kernel records from nvFuser's own profiler (``nvfuser_direct.PythonProfiler``, CUPTI inside nvFuser).

Each sample is one ``with PythonProfiler(): fd.execute(inputs)``. nvFuser's ``FusionExecutorCache``
starts its ``FusionProfiler`` inside the call (after a device synchronize), so the L2 flush run by
``before_sample`` is outside the profiled window, and stops it before returning (event synchronize
and CUPTI flush): the figures are final when the block ends.

What nvFuser 0.2.36 gives (read in ``csrc/fusion_profiler.cpp`` and ``python_direct/profile.cpp``):
``profile.kernel_profiles`` holds one ``KernelProfile`` per segment, indexed by segment id; a
segment that launched no kernel keeps an empty default entry (skipped here), and of a segment that
launched several kernels only the last is kept (a Kineto recording of the same fusion shows them:
``fusiondiff timers`` reports the difference). There is no start time: kernels are put in launch
order by their CUPTI correlation id, which CUPTI hands out in call order. The profile is a singleton
that the next profiled run overwrites, so every field is copied out at once.

``input_bytes`` counts each input tensor whole, so the bandwidth figures can be wrong by
construction; they are kept as :class:`~fusiondiff.records.model.ReportedBandwidth` and judged by
:mod:`fusiondiff.recording.bandwidth`, never shown as facts.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fusiondiff.recording import cupti_owner
from fusiondiff.recording.timing import KernelEvent, KernelSource, SampledRun
from fusiondiff.records.errors import ProfilerError
from fusiondiff.records.model import NVFUSER, LaunchConfig

_INTS = re.compile(r"-?\d+")


@dataclass(frozen=True)
class CopiedProfile:
    """One ``KernelProfile``'s fields, copied out of nvFuser's singleton before the next run."""

    name: str
    scheduler: str
    segment_id: int
    correlation_id: int
    stream: int
    grid_str: str
    block_str: str
    cluster_str: str
    shared_mem_str: str
    registers: int
    time_ms: float
    input_bytes: int
    output_bytes: int
    effective_bandwidth_gbs: float
    percentage_peak_bandwidth: float


def copy_profile(kp: Any) -> CopiedProfile:
    """Copy a ``KernelProfile`` (or anything with its attributes) into plain Python values."""
    return CopiedProfile(
        name=str(kp.name),
        scheduler=str(kp.scheduler),
        segment_id=int(kp.segment_id),
        correlation_id=int(getattr(kp, "correlation_id", 0)),
        stream=int(getattr(kp, "stream", 0)),
        grid_str=str(kp.grid_str),
        block_str=str(kp.block_str),
        cluster_str=str(kp.cluster_str),
        shared_mem_str=str(kp.shared_mem_str),
        registers=int(kp.registers),
        time_ms=float(kp.time_ms),
        input_bytes=int(kp.input_bytes),
        output_bytes=int(kp.output_bytes),
        effective_bandwidth_gbs=float(kp.effective_bandwidth_gbs),
        percentage_peak_bandwidth=float(kp.percentage_peak_bandwidth),
    )


def parse_dims(text: str) -> tuple[int, int, int] | None:
    """``"[128, 1, 1]"`` -> ``(128, 1, 1)``; ``None`` when it is not three integers."""
    values = [int(v) for v in _INTS.findall(text)]
    return (values[0], values[1], values[2]) if len(values) == 3 else None


def parse_shared_mem(text: str) -> tuple[int, int] | None:
    """``"[dyn, static]"`` (bytes) -> ``(dynamic, static)``; ``None`` when it is not two integers."""
    values = [int(v) for v in _INTS.findall(text)]
    return (values[0], values[1]) if len(values) == 2 else None


def kernel_event(kp: CopiedProfile) -> KernelEvent:
    """A copied profile as the kernel event every source reports."""
    smem = parse_shared_mem(kp.shared_mem_str)
    return KernelEvent(
        name=kp.name,
        start_ns=0.0,  # nvFuser reports no start time; order comes from the correlation id
        duration_ns=float(round(kp.time_ms * 1e6)),
        launch=LaunchConfig(
            grid=parse_dims(kp.grid_str),
            block=parse_dims(kp.block_str),
            cluster=parse_dims(kp.cluster_str),
            shared_mem_bytes=sum(smem) if smem else None,
            dynamic_smem_bytes=smem[0] if smem else None,
            static_smem_bytes=smem[1] if smem else None,
            registers_per_thread=kp.registers,
        ),
        stream=kp.stream,
        # a segment nvFuser did not name keeps SegmentProfiler's default, the string "None"
        scheduler=None if kp.scheduler in ("", "None") else kp.scheduler,
        segment_id=kp.segment_id,
        input_bytes=kp.input_bytes,
        output_bytes=kp.output_bytes,
        effective_bandwidth_gbs=kp.effective_bandwidth_gbs,
        percentage_peak_bandwidth=kp.percentage_peak_bandwidth,
    )


def sample_events(profiles: list[CopiedProfile]) -> tuple[KernelEvent, ...]:
    """One sample's kernels in launch order; the empty entries of kernel-less segments dropped."""
    launched = [p for p in profiles if p.name]
    return tuple(kernel_event(p) for p in sorted(launched, key=lambda p: (p.correlation_id, p.segment_id)))


def _python_profiler() -> Any:
    try:
        import nvfuser_direct
    except ImportError as exc:
        raise ProfilerError(f"--timer nvfuser needs nvfuser_direct (nvFuser >= 0.2.34): {exc}") from None
    profiler = getattr(nvfuser_direct, "PythonProfiler", None)
    if profiler is None:
        raise ProfilerError("this nvFuser has no nvfuser_direct.PythonProfiler: use --timer kineto")
    return profiler


def _reset_profiler() -> None:
    """After a failed execution nvFuser's profiler stays "Running" and refuses the next start:
    put it back to ready (``nvfuser_direct.reset_profiler``) where it exists."""
    try:
        import nvfuser_direct
    except ImportError:
        return
    reset = getattr(nvfuser_direct, "reset_profiler", None)
    if callable(reset):
        try:
            reset()
        except Exception:  # noqa: BLE001 - the execution's own error is the one to report
            pass


class NvfuserProfilerSource(KernelSource):
    """Per-kernel device durations and launch configurations from nvFuser's ``PythonProfiler``.

    ``profiler`` makes the context manager (``nvfuser_direct.PythonProfiler`` by default; tests give
    a fake); ``probe`` is handed to :func:`cupti_owner.claim`.
    """

    name = NVFUSER

    def __init__(
        self,
        profiler: Callable[[], Any] | None = None,
        probe: cupti_owner.Probe | None = cupti_owner.cupti_has_subscriber,
    ):
        self._profiler = profiler
        self._probe = probe

    def sample(self, run_once: Callable[[], object], before_sample: Callable[[], None], count: int) -> SampledRun:
        make = self._profiler or _python_profiler()
        cupti_owner.claim(self.name, self._probe)
        samples = []
        for _ in range(count):
            before_sample()
            with make() as prof:
                try:
                    run_once()
                except BaseException:
                    _reset_profiler()
                    raise
            # the profile is overwritten by the next profiled run: copy it out now
            samples.append(sample_events([copy_profile(kp) for kp in prof.profile.kernel_profiles]))
        warnings = []
        if samples and not any(samples):
            warnings.append(
                "nvFuser's PythonProfiler reported no kernel in any sample (kernel-less segments only, "
                "or its CUPTI records were lost)"
            )
        return SampledRun(samples=tuple(samples), warnings=tuple(warnings))
