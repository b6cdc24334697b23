"""The environment a capture is recorded in: GPU, clocks, driver and library versions."""

from __future__ import annotations

import dataclasses
import datetime
import functools
import importlib.metadata
import os
import platform
import socket
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from fusiondiff.records.distributed import process_group_backend, rank_from_env
from fusiondiff.records.environment import RUNTIME_NAMES, Environment
from fusiondiff.records.model import FusionRecord


def nvfuser_variables() -> dict[str, str]:
    """Every NVFUSER_* environment variable: they change what nvFuser compiles."""
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith("NVFUSER_")}


def runtime_variables() -> dict[str, str]:
    """The variables of :data:`~fusiondiff.records.environment.RUNTIME_VARIABLES` that are set:
    they change how CUDA and PyTorch run a call."""
    return {k: v for k, v in sorted(os.environ.items()) if k in RUNTIME_NAMES}


def _version(module: str, distribution: str) -> str | None:
    """A package's version without importing it when it is not loaded (Thunder takes seconds)."""
    mod = sys.modules.get(module)
    if mod is None:
        try:
            return importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            return None
    version = getattr(mod, "version", None)
    if callable(version):
        return str(version())
    return str(getattr(mod, "__version__", None))


@functools.cache
def _nvml(device_index: int) -> tuple[Any, Any] | None:
    """``(pynvml, device handle)``, initialised once per process, or None without NVML."""
    try:
        import pynvml

        pynvml.nvmlInit()
        return pynvml, pynvml.nvmlDeviceGetHandleByIndex(device_index)
    except Exception:  # noqa: BLE001 - NVML is optional: clocks are evidence, not a requirement
        return None


def sm_clock_mhz(device_index: int = 0) -> int | None:
    """Current SM clock through NVML, or None where NVML is not available."""
    nvml = _nvml(device_index)
    if nvml is None:
        return None
    pynvml, handle = nvml
    try:
        return int(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM))
    except Exception:  # noqa: BLE001
        return None


def rank_fields() -> dict[str, object]:
    """Rank, local rank, world size and the process group's backend under torchrun; empty for a
    single-process session."""
    info = rank_from_env()
    if info is None:
        return {}
    return {
        "rank": info.rank,
        "local_rank": info.local_rank,
        "world_size": info.world_size,
        "distributed_backend": process_group_backend(),
    }


def current_device_index() -> int:
    """The process's current CUDA device: under torchrun each rank sets its own
    (``torch.cuda.set_device(LOCAL_RANK)``), so device 0 would describe another rank's GPU."""
    import torch

    try:
        return int(torch.cuda.current_device())
    except Exception:  # noqa: BLE001 - no CUDA context yet is not a reason to fail
        return 0


def collect_environment(device_index: int | None = None) -> Environment:
    """Read the recording process's environment (needs torch; the GPU fields need CUDA), for
    ``device_index`` (default: the current CUDA device)."""
    import torch

    from fusiondiff.records.version import __version__

    fields: dict[str, object] = rank_fields()
    if torch.cuda.is_available():
        if device_index is None:
            device_index = current_device_index()
        fields["cuda_device_index"] = device_index
        props = torch.cuda.get_device_properties(device_index)
        fields.update(
            gpu_name=props.name,
            compute_capability=f"{props.major}.{props.minor}",
            sm_count=props.multi_processor_count,
            l2_bytes=props.L2_cache_size,
        )
    # NVML numbers devices ignoring CUDA_VISIBLE_DEVICES: where a launcher narrowed it, this index
    # can name another GPU's clocks (not corrected here)
    nvml = _nvml(device_index or 0)
    if nvml is not None:
        pynvml, handle = nvml
        try:
            fields.update(
                driver_version=str(pynvml.nvmlSystemGetDriverVersion()),
                sm_clock_mhz=int(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)),
                max_sm_clock_mhz=int(pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_SM)),
                memory_clock_mhz=int(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_MEM)),
            )
        except Exception:  # noqa: BLE001 - NVML is optional
            pass
    return Environment(
        cuda_version=torch.version.cuda,
        torch_version=torch.__version__,
        nvfuser_version=_version("nvfuser_direct", "nvfuser"),
        thunder_version=_version("thunder", "lightning-thunder"),
        python_version=platform.python_version(),
        fusiondiff_version=__version__,
        hostname=socket.gethostname(),
        nvfuser_env=nvfuser_variables(),
        runtime_env=runtime_variables(),
        recorded_at=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        **fields,  # type: ignore[arg-type]
    )


def settled_environment(
    env: Environment | None,
    fusions: Sequence[FusionRecord],
    read: Callable[[int], Environment] = collect_environment,
    backend: Callable[[], str | None] = process_group_backend,
) -> Environment:
    """The environment as it stands when recording ends, given ``env`` as read when it began.

    ``fusiondiff capture`` starts recording before the script runs, and a torchrun script picks
    its GPU (``torch.cuda.set_device(LOCAL_RANK)``) and starts its process group only then: read at
    install, rank 1 would describe cuda:0 and no backend. So where the fusions ran on another
    device than the one read at install, the environment is read again for theirs (``read``; its
    clocks are then those of the end of recording), and the backend is read again (``backend``)."""
    if env is None:
        return Environment()
    devices = Counter(f.device_index for f in fusions)
    device = devices.most_common(1)[0][0] if devices else None
    if device is not None and env.cuda_device_index is not None and device != env.cuda_device_index:
        env = dataclasses.replace(read(device), recorded_at=env.recorded_at)
    if env.rank is not None and env.distributed_backend is None:
        env = dataclasses.replace(env, distributed_backend=backend())
    return env
