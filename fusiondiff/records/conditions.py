"""What a fusion's timing ran beside: other work on the GPU, its clocks and throttling, and the host
time of its calls (issue #27). The records only; they are filled in ``fusiondiff/recording/``
(``gpu_activity.py``, ``device_watch.py``, ``host_time.py``) and compared in
``fusiondiff/diff/rules_environment.py``.

Every quantity is a number in the unit its name says; where something could not be known (no NVML,
another timer, a process NVML cannot tell apart) the field is ``None`` or empty, never a guess.
Nothing here imports torch.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from fusiondiff.records.constraints import Count, Duration, Finite, Fraction, Int64

MAX_OTHER_KERNELS = 8
"""Other kernels kept per fusion, the ones that overlapped its samples longest (the rest counted)."""


@dataclass(frozen=True)
class OtherKernel:
    """Kernels of the recording process that were not the fusion's, by name and stream, that ran
    while its samples ran (Kineto's events: CUPTI sees this process only)."""

    name: str
    """The kernel's name without its argument list."""
    stream: Int64 | None
    calls: Count
    """Launches of it that overlapped a sample window."""
    overlap_ns: Duration
    """How long they overlapped the sample windows, summed over the windows."""


@dataclass(frozen=True)
class OtherWork:
    """Work of the recording process, launched by another thread than the one that sampled the
    fusion, that ran on the device during the fusion's sample windows (each window: from its first
    kernel's start to its last kernel's end)."""

    overlap_fractions: tuple[Fraction, ...]
    """Per sample window, the fraction of it during which other kernels ran (0 to 1)."""
    kernels: tuple[OtherKernel, ...] = ()
    """The other kernels that overlapped longest, at most :data:`MAX_OTHER_KERNELS`."""
    kernels_left_out: Count = 0
    """Other (name, stream) kinds of kernel that overlapped but are not listed."""
    copies: Count = 0
    """Copies and memsets of other threads that overlapped a sample window."""
    copy_overlap_ns: Duration = 0.0

    @property
    def windows_overlapped(self) -> int:
        """Sample windows during which any other kernel ran."""
        return sum(1 for f in self.overlap_fractions if f > 0)

    @property
    def mean_fraction(self) -> float:
        """The mean over the windows of the fraction overlapped (0 without windows)."""
        return statistics.fmean(self.overlap_fractions) if self.overlap_fractions else 0.0

    @property
    def streams(self) -> tuple[int, ...]:
        """The streams the listed kernels ran on."""
        return tuple(sorted({k.stream for k in self.kernels if k.stream is not None}))


@dataclass(frozen=True)
class GpuProcess:
    """Another process with a compute context on the fusion's GPU while it was timed (NVML)."""

    pid: Int64
    """As NVML reports it (the driver's PID namespace, which need not be the recording process's)."""
    used_memory_bytes: Count | None = None
    sm_util_max: Finite | None = None
    """Its highest SM utilization (0 to 1) in NVML's per-process samples during the timing; ``None``
    when NVML gave no sample of it in that time."""


@dataclass(frozen=True)
class DeviceActivity:
    """What NVML said about the fusion's GPU while it was timed: read before the warm-ups, right
    after the middle sample was launched (while its kernels run) and after the samples. The
    counters (violation times, energy) are the difference between the first and the last reading."""

    window_ns: Duration
    """Wall time between the first and the last reading (the warm-ups and samples)."""
    own_process_listed: bool
    """Whether NVML listed the recording process's PID among those with a context: when not (another
    PID namespace), ``other_processes`` counts every listed process but one."""
    processes_listed: Count
    """Processes NVML listed with a compute context on the GPU (the recording process included)."""
    other_processes: tuple[GpuProcess, ...] = ()
    """The listed processes other than the recording one, where NVML lets it be told apart."""
    other_process_count: Count = 0
    """How many other processes had a context (also where they cannot be told apart)."""
    spare_replays: tuple[GpuProcess, ...] = ()
    """Listed processes of the same round trip: replays started ahead and prepared on this GPU,
    waiting idle for their turn (they launch nothing while another replay samples). Kept apart from
    ``other_processes``; a ``sm_util_max`` above 0 here would say a spare did run kernels."""
    sm_clock_mhz: Count | None = None
    """The SM clock read as the middle sample runs."""
    memory_clock_mhz: Count | None = None
    """The memory clock read as the middle sample runs."""
    clock_event_reasons: tuple[Count, ...] = ()
    """NVML's clock event (throttle) reasons, a bit mask per reading: before, middle, after."""
    violation_ns: dict[str, Duration] = field(default_factory=dict)
    """Time the clocks were held below their target, per policy (``power``, ``thermal``,
    ``reliability``, ``board_limit``, ``sync_boost``...), during the window."""
    gpu_util_samples: tuple[Fraction, ...] = ()
    """NVML's GPU utilization samples (0 to 1) that fell in the window: every process's kernels."""
    sm_clock_samples_mhz: tuple[Count, ...] = ()
    """NVML's SM clock samples that fell in the window."""
    applications_clock_mhz: Count | None = None
    """The SM applications clock (``nvidia-smi -ac``); the default one is ``default_applications_clock_mhz``."""
    default_applications_clock_mhz: Count | None = None
    energy_mj: Finite | None = None
    """Energy the GPU used during the window, in millijoules."""
    unavailable: tuple[str, ...] = ()
    """The NVML queries this GPU or driver did not answer (``violation_status``, ``samples``...)."""

    @property
    def reasons_while_running(self) -> int | None:
        """The reasons read while the middle sample ran (the reading between the other two)."""
        reasons = self.clock_event_reasons
        return reasons[len(reasons) // 2] if len(reasons) == 3 else None


@dataclass(frozen=True)
class HostTiming:
    """Host time of a fusion's calls, apart from its kernels' device time."""

    execute_ns: tuple[Duration, ...] = ()
    """``fd.execute``'s host time in the calls before the timing protocol's samples (the host
    calls of ``host_time.HOST_CALLS``, then the warm-ups), the first left out, on fusiondiff's
    copies of the inputs: measured alike on every side. Captures recorded before 2026-12-07 hold
    the four warm-ups after the first only."""
    session_execute_ns: tuple[Duration, ...] = ()
    """The session's own ``fd.execute`` calls after its first (at most ``host_time.MAX_CALLS``),
    fusiondiff's own work left out."""
    session_call_ns: tuple[Duration, ...] = ()
    """Thunder's region calls (``FusionDefinitionWrapper``: its cache lookup, input descriptors and
    ``fd.execute``) after the first, fusiondiff's own work left out; empty outside Thunder."""

    @property
    def per_call_samples_ns(self) -> tuple[Duration, ...]:
        """The host times of the calls as the session made them: Thunder's region calls, else the
        session's ``fd.execute``, else the protocol's; empty when none was measured."""
        for samples in (self.session_call_ns, self.session_execute_ns, self.execute_ns):
            if samples:
                return samples
        return ()

    @property
    def per_call_ns(self) -> float | None:
        """The median of :attr:`per_call_samples_ns`; ``None`` when none was measured."""
        samples = self.per_call_samples_ns
        return statistics.median(samples) if samples else None

    @property
    def kind(self) -> str | None:
        """Which host time :attr:`per_call_ns` is: ``thunder_call``, ``session_execute`` or ``execute``."""
        for name, samples in (
            ("thunder_call", self.session_call_ns),
            ("session_execute", self.session_execute_ns),
            ("execute", self.execute_ns),
        ):
            if samples:
                return name
        return None


@dataclass(frozen=True)
class TimingConditions:
    """The conditions a fusion was timed in (``FusionRecord.conditions``)."""

    other_work: OtherWork | None = None
    """``None`` where the timer does not see other work (only Kineto's trace does)."""
    device: DeviceActivity | None = None
    """``None`` where NVML is not available (the capture's warnings say so once)."""
    host: HostTiming | None = None
