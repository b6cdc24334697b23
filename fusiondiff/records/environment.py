"""Where a capture was recorded: the GPU, its clocks, the software stack and the process's place
in a torchrun session (:class:`Environment`, ``Capture.environment``).

Read once when recording starts and settled when it ends (:mod:`fusiondiff.recording.environment`);
compared by the differ (:mod:`fusiondiff.diff.compare`), shown side by side by the reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fusiondiff.records.constraints import Count, Duration, PeakGbs, Positive, SmCount


@dataclass(frozen=True)
class RuntimeVariable:
    """An environment variable that changes how CUDA or PyTorch runs a fusion's call, and what
    it changes (``docs/concepts/environment.md`` gives the sources)."""

    name: str
    kernel: bool
    """It can change a call's kernel time (the kernels chosen, their SMs, where their data lies)."""
    host: bool
    """It can change a call's host time (launches that wait, allocations that synchronise)."""
    what: str
    """What it does, in a few words (the reports show them)."""


RUNTIME_VARIABLES: tuple[RuntimeVariable, ...] = (
    RuntimeVariable("CUDA_LAUNCH_BLOCKING", False, True, "each launch waits for its kernel to end"),
    RuntimeVariable("CUDA_DEVICE_MAX_CONNECTIONS", True, True, "hardware work queues shared by the streams"),
    RuntimeVariable("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", True, False, "the share of SMs an MPS client may use"),
    RuntimeVariable(
        "CUDA_MODULE_LOADING", False, False, "when kernel modules load (lazily at first launch, or eagerly)"
    ),
    RuntimeVariable(
        "PYTORCH_CUDA_ALLOC_CONF",
        True,
        True,
        "the caching allocator's settings: where tensors lie, what allocation costs",
    ),
    RuntimeVariable("PYTORCH_ALLOC_CONF", True, True, "the caching allocator's settings (the newer name)"),
    RuntimeVariable(
        "PYTORCH_NO_CUDA_MEMORY_CACHING",
        True,
        True,
        "no caching allocator: every allocation is cudaMalloc, every free synchronises",
    ),
    RuntimeVariable(
        "NVIDIA_TF32_OVERRIDE", True, False, "0 turns TF32 off in cuBLAS and cuDNN, whatever the program asks"
    ),
    RuntimeVariable(
        "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", True, False, "1 turns TF32 on in cuBLAS, whatever the program asks"
    ),
    RuntimeVariable("CUBLAS_WORKSPACE_CONFIG", True, False, "cuBLAS's workspace: which matmul kernels it may choose"),
)
"""The variables recorded in ``Environment.runtime_env``, besides ``NVFUSER_*``. Left out on
purpose: ``CUDA_VISIBLE_DEVICES`` (which GPU a process sees: ranks differ in it by design, and the
GPU itself is compared), compile and JIT caches (``CUDA_CACHE_*``: the first call only, which no
sample holds), thread counts of CPU work (``OMP_NUM_THREADS``: not ``fd.execute``'s)."""

RUNTIME_NAMES = frozenset(v.name for v in RUNTIME_VARIABLES)


@dataclass(frozen=True)
class PeakBandwidth:
    """The GPU's DRAM bandwidth as measured where the capture was recorded
    (:mod:`fusiondiff.recording.peak`): what a kernel's achieved bandwidth is a share of. Measured,
    not taken from a table of vendor figures (:data:`fusiondiff.records.traffic.VENDOR_GBS` is shown
    beside it), so a GPU running at a lower memory clock, or another board of the same name, is
    judged against what it can do."""

    gbs: PeakGbs
    """Median over the copies of (bytes read + bytes written) / time, in GB/s (1e9 bytes)."""
    best_gbs: PeakGbs
    """The fastest copy's figure."""
    copy_bytes: Count
    """Size of the copied buffer (each copy reads and writes it once)."""
    copies: Count
    """Timed copies (after warm-up copies that are not counted)."""
    seconds: Duration
    """Wall time the measurement took, allocation included: the capture's extra cost."""
    method: str = "device-to-device copy (torch copy_), CUDA events"
    """How it was measured, in words."""


@dataclass(frozen=True)
class Environment:
    """Where a capture was recorded."""

    gpu_name: str | None = None
    compute_capability: str | None = None
    sm_count: SmCount | None = None
    l2_bytes: Count | None = None
    sm_clock_mhz: Count | None = None
    """When recording started: often the idle clock. The clocks read around each fusion's samples
    (``FusionRecord.sm_clock_mhz``) are what the samples ran at."""
    max_sm_clock_mhz: Count | None = None
    memory_clock_mhz: Count | None = None
    driver_version: str | None = None
    cuda_version: str | None = None
    torch_version: str | None = None
    nvfuser_version: str | None = None
    thunder_version: str | None = None
    python_version: str | None = None
    fusiondiff_version: str | None = None
    hostname: str | None = None
    nvfuser_env: dict[str, str] = field(default_factory=dict)
    """Every ``NVFUSER_*`` environment variable of the recording process."""
    runtime_env: dict[str, str] | None = None
    """The variables of :data:`RUNTIME_VARIABLES` the recording process had set, by name (an
    empty dict: none); ``None`` in captures recorded before they were read."""
    recorded_at: str | None = None
    """ISO 8601 time of recording."""
    rank: Count | None = None
    """Global rank under torchrun (``RANK``); ``None`` for a single-process capture."""
    local_rank: Count | None = None
    """Rank on its host (``LOCAL_RANK``); ``None`` for a single-process capture."""
    world_size: Positive | None = None
    """Processes in the session (``WORLD_SIZE``); ``None`` for a single-process capture."""
    cuda_device_index: Count | None = None
    """The recording process's current CUDA device (``torch.cuda.current_device()``): where its
    environment's GPU fields were read. Each fusion's own device is ``FusionRecord.device_index``."""
    distributed_backend: str | None = None
    """The default process group's backend (``nccl``, ``gloo``) when the session had initialised
    one by the end of recording; ``None`` otherwise."""
    peak_bandwidth: PeakBandwidth | None = None
    """The GPU's measured DRAM bandwidth (issue #43); ``None`` when not measured (``--no-peak``,
    no room for the buffers) and in files written before fusiondiff measured it."""
