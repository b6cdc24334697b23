"""The records fusiondiff writes and reads: one model shared by capture, replay, diff and report.

A capture file is JSON (``schema_version`` at the top) holding one :class:`Capture`: the
environment it was recorded in, the timing protocol, and one :class:`FusionRecord` per distinct
fusion execution (same definition and same input signature recorded once, with a call count).
Tensors, when saved, live in a safetensors file next to the JSON (see :mod:`fusiondiff.io.store`).

Every record is a frozen dataclass; statistics are derived from the raw samples on demand, never
stored as the only copy. Nothing in this module imports torch, so ``fusiondiff diff`` and the
reports run on a machine without a GPU.
"""

from __future__ import annotations

import functools
import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from fusiondiff.records.blocks import FusionTimeline
from fusiondiff.records.conditions import TimingConditions
from fusiondiff.records.constraints import (
    BlockDim,
    Count,
    Duration,
    Finite,
    GridDim,
    Int64,
    NaNFloat,
    Positive,
    Registers,
    SmemBytes,
)
from fusiondiff.records.definition import recorded_structural_hash
from fusiondiff.records.environment import Environment
from fusiondiff.records.kernel_names import kernel_history  # noqa: F401 - diff/rules_fusion.py imports it from here
from fusiondiff.records.thunder import ThunderFigure

SCHEMA_VERSION = 1
"""Version of the JSON layout. Bump it when a field changes meaning or is removed."""

CaptureKind = Literal["live", "replay"]
L2Mode = Literal["cold", "warm"]
TimerName = Literal["kineto", "nvfuser", "seed-sum-of-all-events"]
"""The kernel-record sources that time samples, by the name the records keep (``TimingProtocol.method``,
``Timing.timer``); :data:`fusiondiff.recording.sources.KERNEL_SOURCES` has one source per name."""
KINETO: Final = "kineto"
"""torch.profiler over CUPTI: the default."""
NVFUSER: Final = "nvfuser"
"""nvFuser's own ``PythonProfiler`` (CUPTI too): ``--timer nvfuser``."""
SEED_METHOD: Final = "seed-sum-of-all-events"
"""The seed issue's measurement: one profiled call, every profiler event's time summed."""


@dataclass(frozen=True)
class TensorMeta:
    """One fusion input as the fusion saw it: a tensor's layout, or a scalar's value."""

    index: Count
    """Position in the fusion's input list."""
    kind: Literal["tensor", "scalar"]
    dtype: str
    """``torch.bfloat16`` style for tensors; the Python type name (``int``, ``float``) for scalars."""
    shape: tuple[Count, ...] = ()
    stride: tuple[Count, ...] = ()
    storage_offset: Count = 0
    """In elements, as ``Tensor.storage_offset()``."""
    storage_numel: Count = 0
    """Elements in the underlying storage; a faithful copy needs at least this many."""
    device: str = "cpu"
    alignment_bytes: Count = 0
    """Largest power of two (capped at 256) dividing the data pointer; decides vectorization."""
    is_contiguous: bool = True
    min_value: Finite | None = None
    """For integer and bool tensors: smallest value (index inputs decide gathers and index types)."""
    max_value: Finite | None = None
    scalar_value: str | None = None
    """For scalars: ``repr`` of the value, so floats keep full precision."""
    tensor_key: str | None = None
    """Name of the saved tensor in the capture's safetensors file, if tensors were saved."""

    def __post_init__(self) -> None:
        if self.kind == "tensor" and len(self.shape) != len(self.stride):
            raise ValueError(f"shape has {len(self.shape)} dimensions but stride {len(self.stride)}")
        low, high = self.min_value, self.max_value
        if (low is None) != (high is None):  # the recorder reads a range's two ends together
            raise ValueError(f"min_value {low!r} and max_value {high!r}: a value range has both ends or neither")
        if low is not None and high is not None and low > high:
            raise ValueError(f"min_value {low!r} is above max_value {high!r}")

    @property
    def signature(self) -> tuple[Any, ...]:
        """What nvFuser's input cache distinguishes: dtype, shape, stride and alignment."""
        if self.kind == "scalar":
            return ("scalar", self.dtype)
        return (self.dtype, self.shape, self.stride, min(self.alignment_bytes, 16), self.device)


@dataclass(frozen=True)
class LaunchConfig:
    """How a kernel was launched."""

    grid: tuple[GridDim, GridDim, GridDim] | None
    """``None`` when the source does not report it (the seed method's profiler events)."""
    block: tuple[BlockDim, BlockDim, BlockDim] | None
    cluster: tuple[BlockDim, BlockDim, BlockDim] | None = None
    """``None`` when the kernel-record source does not report clusters (Kineto does not)."""
    shared_mem_bytes: SmemBytes | None = None
    """Dynamic plus static shared memory per block."""
    dynamic_smem_bytes: SmemBytes | None = None
    """``None`` when the source reports only the total, as both sources today do (Kineto's
    ``shared memory`` is the sum): kept so a source that splits it can say so."""
    static_smem_bytes: SmemBytes | None = None
    """``None`` when the source reports only the total (see ``dynamic_smem_bytes``)."""
    registers_per_thread: Registers | None = None

    def __post_init__(self) -> None:
        if self.block is not None and math.prod(self.block) > 1024:
            raise ValueError(f"block {self.block} is {math.prod(self.block)} threads: a CUDA block holds at most 1024")


@dataclass(frozen=True)
class Timing:
    """Raw per-sample device durations and the statistics derived from them."""

    samples_ns: tuple[Duration, ...]
    timer: TimerName = KINETO
    """The kernel-record source that measured these samples (:data:`TimerName`). Files written before
    the field existed were all measured through Kineto."""

    @property
    def count(self) -> int:
        return len(self.samples_ns)

    @property
    def median_ns(self) -> float:
        return statistics.median(self.samples_ns) if self.samples_ns else float("nan")

    @property
    def mean_ns(self) -> float:
        return statistics.fmean(self.samples_ns) if self.samples_ns else float("nan")

    @property
    def min_ns(self) -> float:
        return min(self.samples_ns) if self.samples_ns else float("nan")

    @property
    def max_ns(self) -> float:
        return max(self.samples_ns) if self.samples_ns else float("nan")

    @property
    def iqr_ns(self) -> float:
        """Interquartile range; 0 with fewer than two samples."""
        if len(self.samples_ns) < 2:
            return 0.0
        q = statistics.quantiles(self.samples_ns, n=4, method="inclusive")
        return q[2] - q[0]

    def summary(self) -> dict[str, float]:
        """Derived statistics, written next to the raw samples for readers of the JSON."""
        return {
            "count": self.count,
            "median_ns": self.median_ns,
            "mean_ns": self.mean_ns,
            "min_ns": self.min_ns,
            "max_ns": self.max_ns,
            "iqr_ns": self.iqr_ns,
        }


@dataclass(frozen=True)
class ReportedBandwidth:
    """nvFuser's own byte counts and bandwidth for a kernel (``PythonProfiler``), kept as nvFuser
    computed them: it counts every input tensor whole, so a gather that reads a few rows of a large
    table is credited with the whole table. ``suspect`` says when a figure is wrong by construction."""

    input_bytes: Int64
    """Bytes of the segment's inputs as nvFuser counts them (whole tensors)."""
    output_bytes: Int64
    effective_gbs: NaNFloat
    """``(input_bytes + output_bytes) / time``, median over the samples, in GB/s (1e9 bytes)."""
    percent_of_peak: NaNFloat
    """``effective_gbs`` as a percentage of the device's peak DRAM bandwidth (median over the samples)."""
    suspect: str | None = None
    """Why these figures are not what the kernel moved (above 100 % of peak, or a gathered-from
    table counted whole); ``None`` when nothing is known to be wrong with them."""


@dataclass(frozen=True)
class KernelRecord:
    """One kernel launched by a fusion execution, with its times across the samples."""

    name: str
    """The kernel's function name as launched (``nvfuser_inner_persistent_f0_c1_r0_g0``)."""
    normalized_name: str
    """The name without the cache-history parts (``f``, ``c``, ``r``): comparable across processes."""
    scheduler: str | None
    group_id: Count | None
    """Segment (group) of the segmented fusion that launched it."""
    launch: LaunchConfig
    timing: Timing
    order: Count = 0
    """Position in launch order within one execution."""
    source_hash: str | None = None
    """sha256 of the generated CUDA source, when it could be obtained."""
    stream: Int64 | None = None
    reported_bandwidth: ReportedBandwidth | None = None
    """nvFuser's byte counts and bandwidth, when the ``nvfuser`` timer recorded the kernel."""


@dataclass(frozen=True)
class Segment:
    """One group of a segmented fusion: which scheduler compiled it."""

    group_id: Count
    scheduler: str


@dataclass(frozen=True)
class Segmentation:
    """How nvFuser split the fusion. One segment when it was not segmented."""

    segments: tuple[Segment, ...]
    source: str = "scheduled_ir"
    """Where it was read from: ``scheduled_ir`` or ``kernel_names`` (fallback)."""

    @property
    def is_segmented(self) -> bool:
        return len(self.segments) > 1

    @property
    def schedulers(self) -> tuple[str, ...]:
        return tuple(s.scheduler for s in sorted(self.segments, key=lambda s: s.group_id))


@dataclass(frozen=True)
class TimingProtocol:
    """How the samples were taken. Stored with every capture so the differ can refuse to compare
    numbers taken in different ways without saying so."""

    method: TimerName = KINETO
    """The kernel-record source (:data:`TimerName`)."""
    warmup: Count = 5
    samples: Count = 30
    l2_mode: L2Mode = "cold"
    """``cold``: a buffer of ``flush_bytes`` is written and the device synchronized before each
    sample, so no input sits in L2; ``warm``: samples run back to back after a synchronize."""
    flush_bytes: Count = 0
    on_copies: bool = True
    """Samples ran on storage-faithful copies of the inputs, so the session's tensors never change
    (the recorder always times on copies and says so; False only in files of other producers)."""


FailureKind = Literal["illegal_address", "compile_error", "exception", "timeout"]


@dataclass(frozen=True)
class FusionFailure:
    """The fusion's execution failed: what kind of failure, in one line, and where the rest is."""

    kind: FailureKind
    """``illegal_address``: a CUDA illegal memory access (an index out of bounds, a view past its
    storage); ``compile_error``: nvFuser or NVRTC could not compile it; ``exception``: any other
    error raised by the execution; ``timeout``: stopped at the replay's timeout while executing."""
    message: str
    """The error's first line (the C++ stack nvFuser adds is in the log file)."""
    log_file: str | None = None
    """The log beside the capture holding the full output, when the run kept one."""


@dataclass(frozen=True)
class FusionRecord:
    """One distinct fusion execution: what nvFuser was asked to run, and how it ran it."""

    name: str
    """Thunder's region name (``nvFusion0``) or ``fusion<N>`` for a replayed script."""
    definition: str
    """The definition as nvFuser prints it (``print(fd)``)."""
    definition_hash: str
    """sha256 of the canonical definition (value names renamed in order)."""
    inputs: tuple[TensorMeta, ...]
    kernels: tuple[KernelRecord, ...]
    segmentation: Segmentation
    timing: Timing
    """Per sample: sum of the fusion's kernel durations."""
    call_count: Positive = 1
    trace: str | None = None
    """``forward`` or ``backward`` for a Thunder region; ``None`` for a replay."""
    ops_summary: str | None = None
    """Thunder's list of the region's operations."""
    enable_options: tuple[str, ...] = ()
    disable_options: tuple[str, ...] = ()
    device_index: Count = 0
    repro_script: str | None = None
    """The script nvFuser writes for these inputs (``fd.repro_script_for``)."""
    exact_constants: tuple[str, ...] = ()
    """Full-precision ``repr`` of the floating-point constants of the region, where known."""
    cuda_sources: dict[str, str] = field(default_factory=dict)
    """Generated CUDA source per kernel name, only when asked for (it is large)."""
    sm_clock_mhz: tuple[Count, ...] = ()
    """SM clock readings: before the samples, as the middle one runs (since issue #23), after."""
    warnings: tuple[str, ...] = ()
    failure: FusionFailure | None = None
    """Set when the execution failed: the record then has its inputs but no kernels or samples."""
    sm_timeline: FusionTimeline | None = None
    """The block-level timeline (``--sm-timeline``): per kernel, which SM ran each CTA and when,
    with its statistics, or why not; the CTA arrays are in the file it names."""
    conditions: TimingConditions | None = None
    """What its timing ran beside (:mod:`fusiondiff.records.conditions`): other work on the GPU, clocks and
    throttling, the host time of its calls; ``None`` in files written before issue #27."""
    graph_hash: str | None = None
    """The definition's graph hash as the recorder computed it, tagged with its algorithm
    (:func:`fusiondiff.records.definition.tagged_structural_hash`); ``None`` in files written before issue
    #28. A memo: :attr:`structure_hash` uses it only where this fusiondiff's algorithm wrote it."""
    outputs: tuple[TensorMeta, ...] = ()
    """The tensors the execution returned (layout only, no values): with the inputs, the bytes the
    fusion must move (:mod:`fusiondiff.records.traffic`). Empty in files written before issue #43
    and for a fusion that was not timed."""
    other_process_timings: tuple[Timing, ...] = ()
    """The same fusion's timing (as :attr:`timing`) in other fresh processes of the same program:
    ``fusiondiff replay --processes K`` and ``fusiondiff diff --also-a/--also-b`` put them here
    (:mod:`fusiondiff.records.processes`). With them the kernel verdict is judged against the spread
    measured between these processes, not the calibration. Empty for one process."""

    def __post_init__(self) -> None:
        if self.sm_timeline is not None:
            self.sm_timeline.check_grids({k.order: k.launch.grid for k in self.kernels})

    @functools.cached_property
    def input_signature(self) -> tuple[Any, ...]:
        """Each input's :attr:`TensorMeta.signature`, in order: read by matching and by the
        comparison of every pair, so kept once worked out (the record is frozen)."""
        return tuple(t.signature for t in self.inputs)

    @functools.cached_property
    def structure_hash(self) -> str:
        """The definition's graph hash (:func:`fusiondiff.records.definition.structural_hash`): what the
        differ matches on. The one recorded with the fusion where this fusiondiff's algorithm wrote
        it (:attr:`graph_hash`), else computed from the definition, whatever version wrote the file."""
        return recorded_structural_hash(self.definition, self.graph_hash)

    @property
    def replay_key(self) -> tuple[Any, ...]:
        """Records with the same key are one distinct fusion, replayed once by the round trip and
        written once by ``repro``: the definition's graph, the inputs' signature, the options."""
        return (self.structure_hash, self.input_signature, self.enable_options, self.disable_options)

    @property
    def key(self) -> str:
        """Stable identity within a capture: name, pass and a short definition hash."""
        return f"{self.trace or 'script'}/{self.name}/{self.definition_hash[:12]}"


def traced_name(name: str, trace: str | None) -> str:
    """How every output names a fusion: ``nvFusion0 [forward]``, or the bare name outside a trace."""
    return f"{name} [{trace}]" if trace else name


@dataclass(frozen=True)
class CommunicationKernel:
    """One collective's kernels (NCCL's), as they ran on this rank during the capture block: kept
    apart from fusion time, since a collective's duration is mostly time spent waiting for the
    other ranks to reach it."""

    name: str
    """The kernel's name without its argument list (``ncclDevKernel_AllReduce_Sum_bf16_RING_LL``)."""
    calls: Positive
    """How many times it ran in the capture block (the true count, also past ``samples_ns``'s cap)."""
    samples_ns: tuple[Duration, ...]
    """Each call's device duration in ns, in the order they ran; at most the first
    ``recording.communication.MAX_SAMPLES`` calls are kept."""
    total_ns: Duration
    """Sum of the device durations of all ``calls``, in ns (kept ones and the others)."""
    stream: Count | None = None
    """The CUDA stream of its first call, where the profiler reports it."""
    launch: LaunchConfig | None = None
    """Grid and block of its first call, where the profiler reports them."""

    def __post_init__(self) -> None:
        if self.calls < len(self.samples_ns):
            raise ValueError(f"{len(self.samples_ns)} samples for {self.calls} call(s): calls counts every sample")
        kept = math.fsum(self.samples_ns)
        if kept > self.total_ns * (1 + 1e-9) + 1e-6:
            raise ValueError(f"total_ns {self.total_ns!r} is below the sum of its samples ({kept!r})")

    @property
    def median_ns(self) -> float:
        """Median of the kept samples (NaN with none)."""
        return statistics.median(self.samples_ns) if self.samples_ns else float("nan")


@dataclass(frozen=True)
class Capture:
    """A whole capture file: environment, protocol and the recorded fusions."""

    kind: CaptureKind
    environment: Environment
    protocol: TimingProtocol
    fusions: tuple[FusionRecord, ...]
    source: str = ""
    """What was run: the script path and arguments, or ``session``."""
    tensors_file: str | None = None
    """safetensors file next to the JSON holding the exact inputs, if saved."""
    warnings: tuple[str, ...] = ()
    schema_version: Int64 = SCHEMA_VERSION
    communication: tuple[CommunicationKernel, ...] = ()
    """The session's collectives (NCCL's kernels) observed on this rank during the capture block,
    one record per kernel name: kept apart from fusion time, never part of a fusion's kernels or
    samples. Empty outside torchrun, with ``--no-communication``, where CUPTI was not ours to use
    (a warning says why), and in files written before the field existed."""
    roundtrip: bool = False
    """The merged replay ``fusiondiff roundtrip`` writes (read it with :func:`fusiondiff.records.notes.from_roundtrip`)."""
    thunder_figures: tuple[ThunderFigure, ...] = ()
    """The medians Thunder's own report printed for the regions replayed from its folder (its
    WallTime and KernelTime timers, each executor it compared), shown beside fusiondiff's figures;
    empty for any other capture and in files written before the field existed."""

    @property
    def fusion_time_ns(self) -> float:
        """The fusions' device time in the capture block, as each timed fusion's median times its
        call count, summed (failed and untimed fusions count 0)."""
        return math.fsum(
            f.timing.median_ns * f.call_count for f in self.fusions if f.timing.samples_ns and f.failure is None
        )

    @property
    def communication_ns(self) -> float:
        """The communication kernels' device time in the capture block, every call summed: time the
        rank's collectives ran, waiting for the other ranks included."""
        return math.fsum(k.total_ns for k in self.communication)


# --------------------------------------------------------------------------------------------
# The layout of a tensor input's view


def view_extent(meta: TensorMeta) -> int:
    """Elements of storage a tensor input's view reaches: its storage offset plus its largest
    linear index, plus one (just the offset for an empty view)."""
    if any(size == 0 for size in meta.shape):
        return int(meta.storage_offset)
    return int(meta.storage_offset) + 1 + sum((size - 1) * abs(st) for size, st in zip(meta.shape, meta.stride))


def alignment_of(address: int, cap: int = 256) -> int:
    """Largest power of two dividing ``address``, at most ``cap`` (0 aligns to everything)."""
    if address == 0:
        return cap
    return min(address & -address, cap)
