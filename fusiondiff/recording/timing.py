"""The timing protocol shared by live capture and replay.

Both sides must be measured the same way, or the comparison is meaningless. The protocol:

1. ``warmup`` untimed executions (compilation, allocator and clock ramp-up are not measured);
2. ``samples`` timed executions. Before each, in ``cold`` mode, a buffer of at least twice the L2
   size is written and the device synchronized, so no input or intermediate is served from L2
   (the live side's inputs were usually just written by the previous op, the repro's were not:
   flushing takes that difference out); in ``warm`` mode only a synchronize;
3. per-kernel device durations come from a kernel-record source (CUPTI via Kineto, or via nvFuser's
   ``PythonProfiler``: ``--timer``), one list
   of kernel events per sample; a fusion's sample time is the sum of its kernels' durations, never
   the sum of every profiler event (that is what misled the seed issue).

The logic here needs no GPU: the kernel source and the flush are injected, so tests drive it with
recorded or fake events (as torch.utils.benchmark tests do with mock timers).
"""

from __future__ import annotations

import dataclasses
import statistics
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fusiondiff.records.conditions import OtherWork
from fusiondiff.records.distributed import communication_apart
from fusiondiff.records.errors import ProfilerError
from fusiondiff.records.kernel_names import parse_kernel_name
from fusiondiff.records.model import (
    KINETO,
    KernelRecord,
    LaunchConfig,
    ReportedBandwidth,
    TimerName,
    Timing,
    TimingProtocol,
)


@dataclass(frozen=True)
class KernelEvent:
    """One kernel launch as the kernel-record source saw it."""

    name: str
    start_ns: float
    duration_ns: float
    launch: LaunchConfig
    stream: int | None = None
    scheduler: str | None = None
    """The scheduler as the source reports it (nvFuser's profiler does); else read from the name."""
    segment_id: int | None = None
    """The segment (group) that launched it, where the source reports it; else read from the name."""
    input_bytes: int | None = None
    """nvFuser's byte counts and bandwidth (``nvfuser`` source only; see ``ReportedBandwidth``)."""
    output_bytes: int | None = None
    effective_bandwidth_gbs: float | None = None
    percentage_peak_bandwidth: float | None = None


@dataclass(frozen=True)
class SampledRun:
    """What a kernel source returns: the kernels of each sample, in launch order."""

    samples: tuple[tuple[KernelEvent, ...], ...]
    warnings: tuple[str, ...] = ()
    fusion_samples_ns: tuple[float, ...] | None = None
    """A source's own figure per sample, when it is not the sum of the kernels (the seed method)."""
    clock_mhz: tuple[int, ...] = ()
    """SM clock readings of :func:`measure`: before, while the middle sample runs, after."""
    other_work: OtherWork | None = None
    """What other threads of the process ran on the GPU during the samples, where the source sees
    it (Kineto: :mod:`fusiondiff.recording.gpu_activity`)."""


class KernelSource(ABC):
    """Runs the samples and reports the kernels each one launched. The sources fusiondiff has are
    listed by their names in :data:`fusiondiff.recording.sources.KERNEL_SOURCES`."""

    name: TimerName
    """The timer name its records keep (``Timing.timer``) and the protocol selects it by."""

    @abstractmethod
    def sample(self, run_once: Callable[[], object], before_sample: Callable[[], None], count: int) -> SampledRun:
        """Call ``before_sample(); run_once()`` ``count`` times and return each sample's kernels."""


def measure(
    run_once: Callable[[], object],
    protocol: TimingProtocol,
    source: KernelSource,
    flush_l2: Callable[[], None],
    synchronize: Callable[[], None],
    read_clock: Callable[[], int | None] | None = None,
) -> SampledRun:
    """Run the protocol: warm-ups, then timed samples with the L2 treatment the protocol asks for.

    ``read_clock`` (the SM clock, through NVML) is read before the warm-ups, right after the middle
    sample's execution is launched and before anything waits for it (while its kernels run: readings
    before or after the samples, with nothing running, can be the idle clock), and after the
    samples; the readings it gives are in :attr:`SampledRun.clock_mhz`."""
    clocks = [read_clock()] if read_clock is not None else []
    for _ in range(protocol.warmup):
        run_once()
    synchronize()

    def before_sample() -> None:
        if protocol.l2_mode == "cold":
            flush_l2()
        synchronize()

    launched = [0]

    def sampled_once() -> object:
        result = run_once()
        launched[0] += 1
        if read_clock is not None and launched[0] == protocol.samples // 2 + 1:
            clocks.append(read_clock())
        return result

    run = source.sample(sampled_once, before_sample, protocol.samples)
    if len(run.samples) != protocol.samples:
        raise ProfilerError(f"{source.name} returned {len(run.samples)} samples, expected {protocol.samples}")
    clocks += [read_clock()] if read_clock is not None else []
    return dataclasses.replace(run, clock_mhz=tuple(c for c in clocks if c is not None))


def _reported_bandwidth(events: Sequence[KernelEvent]) -> ReportedBandwidth | None:
    """nvFuser's figures for one kernel across the samples (medians), when the source gave them."""
    if any(
        e.input_bytes is None
        or e.output_bytes is None
        or e.effective_bandwidth_gbs is None
        or e.percentage_peak_bandwidth is None
        for e in events
    ):
        return None
    first = events[0]
    assert first.input_bytes is not None and first.output_bytes is not None
    return ReportedBandwidth(
        input_bytes=first.input_bytes,
        output_bytes=first.output_bytes,
        effective_gbs=statistics.median(e.effective_bandwidth_gbs or 0.0 for e in events),
        percent_of_peak=statistics.median(e.percentage_peak_bandwidth or 0.0 for e in events),
    )


def kernel_records(
    run: SampledRun, source_hashes: dict[str, str] | None = None, timer: TimerName = KINETO
) -> tuple[tuple[KernelRecord, ...], Timing, list[str]]:
    """Group a sampled run's kernels into per-kernel records (by launch position) and a fusion timing,
    each timing named after ``timer``, the source that measured it.

    Returns ``(kernels, fusion_timing, warnings)``. Samples normally launch the same kernels; when
    they do not (a runtime recompiled mid-run), kernels are grouped by position and a warning says so.
    """
    warnings: list[str] = list(run.warnings)
    samples, communication = communication_apart(run.samples)  # NCCL's kernels are never a fusion's
    warnings += [communication] if communication else []
    counts = {len(s) for s in samples}
    if len(counts) > 1:
        warnings.append(f"samples launched different numbers of kernels: {sorted(counts)}")
    width = max(counts) if counts else 0
    kernels = []
    for position in range(width):
        events = [s[position] for s in samples if len(s) > position]
        first = events[0]
        names = {e.name for e in events}
        if len(names) > 1:
            warnings.append(f"kernel position {position} ran {len(names)} different kernels across samples")
        normalized, scheduler, group = parse_kernel_name(first.name)
        kernels.append(
            KernelRecord(
                name=first.name.split("(", 1)[0].removeprefix("nvf::"),
                normalized_name=normalized,
                scheduler=scheduler if scheduler is not None else first.scheduler,
                group_id=group if group is not None else first.segment_id,
                launch=first.launch,
                timing=Timing(samples_ns=tuple(e.duration_ns for e in events), timer=timer),
                order=position,
                source_hash=(source_hashes or {}).get(first.name.split("(", 1)[0].removeprefix("nvf::")),
                stream=first.stream,
                reported_bandwidth=_reported_bandwidth(events),
            )
        )
    if run.fusion_samples_ns is not None:
        fusion = Timing(samples_ns=run.fusion_samples_ns, timer=timer)
    else:
        fusion = Timing(samples_ns=tuple(float(sum(e.duration_ns for e in s)) for s in samples), timer=timer)
    return tuple(kernels), fusion, warnings


def noise_summary(samples_ns: Sequence[float]) -> str:
    """A short spread description for progress lines: median and relative IQR."""
    if not samples_ns:
        return "no samples"
    med = statistics.median(samples_ns)
    t = Timing(samples_ns=tuple(samples_ns))
    rel = 100 * t.iqr_ns / med if med else 0.0
    return f"{med / 1000:.2f} us (iqr {rel:.1f} %)"
