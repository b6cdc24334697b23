"""Where a capture was recorded: the GPU, its clocks, the software stack and the process's place
in a torchrun session (:class:`Environment`, ``Capture.environment``).

Read once when recording starts and settled when it ends (:mod:`fusiondiff.recording.environment`);
compared by the differ (:mod:`fusiondiff.diff.compare`), shown side by side by the reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fusiondiff.records.constraints import Count, Duration, PeakGbs, Positive, SmCount


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
