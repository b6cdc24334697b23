"""What NVML says about the GPU while one fusion is timed: other processes with a context on it,
clocks, throttle (clock event) reasons, the time the clocks were held back and why, utilization.

Nothing here runs on the timed path's device side, and nothing runs in a thread: the timing
protocol reads the SM clock before the warm-ups, right after the middle sample is launched and
after the samples (:func:`fusiondiff.recording.timing.measure`); :meth:`DeviceWatch.read_clock` is
that reading, and also reads the reasons (and, in the middle, the memory clock) beside it. The
cumulative counters (violation times, energy) are read at the first reading and in
:meth:`DeviceWatch.finish`, after the samples, and kept as differences; NVML's own sample buffers
(utilization, SM clock, per-process utilization) are read once, in :meth:`~DeviceWatch.finish`,
for the samples whose timestamps fall in the window.

Without NVML (``nvidia-ml-py`` missing, no driver) nothing is recorded and :func:`missing_line`
says why, once per capture: the differ then does not compare what it cannot know.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fusiondiff.records.conditions import DeviceActivity, GpuProcess, HostTiming, TimingConditions

POLICIES = (
    ("power", "NVML_PERF_POLICY_POWER"),
    ("thermal", "NVML_PERF_POLICY_THERMAL"),
    ("sync_boost", "NVML_PERF_POLICY_SYNC_BOOST"),
    ("board_limit", "NVML_PERF_POLICY_BOARD_LIMIT"),
    ("low_utilization", "NVML_PERF_POLICY_LOW_UTILIZATION"),
    ("reliability", "NVML_PERF_POLICY_RELIABILITY"),
    ("app_clocks", "NVML_PERF_POLICY_TOTAL_APP_CLOCKS"),
    ("base_clocks", "NVML_PERF_POLICY_TOTAL_BASE_CLOCKS"),
)
"""NVML's violation policies read, by the name they are recorded under."""
MAX_SAMPLES = 64
"""NVML samples kept per series and fusion."""

TOKEN_ENV = "FUSIONDIFF_ROUNDTRIP_RUN"
"""Set in every replay process of one round trip, so Ctrl-C can stop exactly those, and a replay
can tell its idle neighbours (started ahead on its GPU) from other processes there."""


@functools.cache
def _open(device_index: int) -> tuple[Any, Any] | str:
    """``(pynvml, handle)`` of the device, or why not (initialised once per process)."""
    try:
        import pynvml
    except ImportError:
        return "nvidia-ml-py is not installed (pip install nvidia-ml-py)"
    try:
        pynvml.nvmlInit()
        return pynvml, pynvml.nvmlDeviceGetHandleByIndex(device_index)
    except Exception as exc:  # noqa: BLE001 - NVML's own errors: no driver, no device
        return f"NVML did not start ({type(exc).__name__}: {exc})"


def missing_line(why: str) -> str:
    """The capture's one warning where NVML cannot be used, saying why and what is not recorded."""
    return f"NVML is not available: {why}; other processes on the GPU, throttling and clock reasons were not recorded"


def _reasons_call(pynvml: Any) -> Callable[[Any], int] | None:
    # renamed from "throttle" to "clocks event" reasons in NVML 12.2; older bindings have the old name
    return getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
        pynvml, "nvmlDeviceGetCurrentClocksThrottleReasons", None
    )


class DeviceWatch:
    """NVML's view of one fusion's timing; ``read_clock`` goes to the timing protocol as its clock."""

    def __init__(
        self,
        device_index: int,
        opened: tuple[Any, Any] | str | None = None,
        wall_ns: Callable[[], int] = time.time_ns,
        own_pid: int | None = None,
    ):
        opened = _open(device_index) if opened is None else opened
        self._why = opened if isinstance(opened, str) else None
        self._nvml: tuple[Any, Any] | None = None if isinstance(opened, str) else opened
        self._wall_ns = wall_ns
        self._own_pid = os.getpid() if own_pid is None else own_pid
        self._readings = 0
        self._start_ns: int | None = None
        self._violations: dict[str, float] = {}
        self._energy: float | None = None
        self._reasons: list[int] = []
        self._unavailable: list[str] = []
        self.sm_clock_mhz: int | None = None
        self.memory_clock_mhz: int | None = None

    @property
    def available(self) -> bool:
        return self._nvml is not None

    @property
    def missing(self) -> str | None:
        """Why NVML cannot be used, as the capture's warning (:func:`missing_line`); ``None`` where it can."""
        return None if self._why is None else missing_line(self._why)

    def _pair(self) -> tuple[Any, Any]:
        assert self._nvml is not None, "asked only where NVML opened"
        return self._nvml

    def _ask(self, what: str, call: Callable[[], Any]) -> Any:
        """``call()``, or ``None`` where this GPU or driver does not answer it (noted once)."""
        try:
            return call()
        except Exception:  # noqa: BLE001 - NVMLError_NotSupported, NoPermission, a missing symbol
            self._note(what)
            return None

    def _note(self, what: str) -> None:
        if what not in self._unavailable:
            self._unavailable.append(what)

    def read_clock(self) -> int | None:
        """The SM clock now, with the clock event reasons beside it; the first call also reads the
        counters, the second (the middle sample's) the memory clock."""
        if self._nvml is None:
            return None
        pynvml, handle = self._nvml
        self._readings += 1
        clock = self._ask("clock", lambda: int(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)))
        reasons_call = _reasons_call(pynvml)
        reasons = self._ask("clock_event_reasons", lambda: int(reasons_call(handle))) if reasons_call else None
        if reasons is not None:
            self._reasons.append(reasons)
        if self._readings == 1:
            self._start_ns = self._wall_ns()
            self._violations = self._violation_times()
            self._energy = self._ask("energy", lambda: float(pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)))
        elif self._readings == 2:
            self.sm_clock_mhz = clock
            self.memory_clock_mhz = self._ask(
                "clock", lambda: int(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_MEM))
            )
        return clock

    def _violation_times(self) -> dict[str, float]:
        pynvml, handle = self._pair()
        times = {}
        for name, constant in POLICIES:
            policy = getattr(pynvml, constant, None)
            if policy is None:
                continue
            status = self._ask(
                f"violation_status.{name}", functools.partial(pynvml.nvmlDeviceGetViolationStatus, handle, policy)
            )
            if status is not None:
                times[name] = float(status.violationTime)
        return times

    def finish(self) -> DeviceActivity | None:
        """The window's record (``None`` without NVML or before any reading)."""
        if self._nvml is None or self._start_ns is None:
            return None
        pynvml, handle = self._nvml
        end_ns = self._wall_ns()
        after = self._violation_times()
        violations = {k: max(after[k] - v, 0.0) for k, v in self._violations.items() if k in after}
        energy = self._ask("energy", lambda: float(pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)))
        since_us = self._start_ns // 1000
        listed = self._ask("processes", lambda: list(pynvml.nvmlDeviceGetComputeRunningProcesses(handle))) or []
        pids = [int(p.pid) for p in listed]
        utilization = self._process_utilization(since_us)
        own_listed = self._own_pid in pids
        # a round trip's replays started ahead hold a context here while they wait for their turn;
        # told apart by their run's token where NVML's PIDs are this process's (own PID listed)
        spares = round_trip_spares(pids) if own_listed else set()
        listed_others = [
            GpuProcess(pid=int(p.pid), used_memory_bytes=_memory(p), sm_util_max=utilization.get(int(p.pid)))
            for p in listed
            if int(p.pid) != self._own_pid
        ]
        others = tuple(p for p in listed_others if p.pid not in spares)
        return DeviceActivity(
            window_ns=float(max(end_ns - self._start_ns, 0)),
            own_process_listed=own_listed,
            processes_listed=len(pids),
            other_processes=others if own_listed else (),
            other_process_count=len(others) if own_listed else max(len(pids) - 1, 0),
            spare_replays=tuple(p for p in listed_others if p.pid in spares),
            sm_clock_mhz=self.sm_clock_mhz,
            memory_clock_mhz=self.memory_clock_mhz,
            clock_event_reasons=tuple(self._reasons),
            violation_ns=violations,
            gpu_util_samples=tuple(v / 100 for v in self._samples("NVML_GPU_UTILIZATION_SAMPLES", since_us)),
            sm_clock_samples_mhz=tuple(int(v) for v in self._samples("NVML_PROCESSOR_CLK_SAMPLES", since_us)),
            applications_clock_mhz=self._ask(
                "applications_clock", lambda: int(pynvml.nvmlDeviceGetApplicationsClock(handle, pynvml.NVML_CLOCK_SM))
            ),
            default_applications_clock_mhz=self._ask(
                "applications_clock",
                lambda: int(pynvml.nvmlDeviceGetDefaultApplicationsClock(handle, pynvml.NVML_CLOCK_SM)),
            ),
            energy_mj=None if energy is None or self._energy is None else max(energy - self._energy, 0.0),
            unavailable=tuple(self._unavailable),
        )

    def _samples(self, constant: str, since_us: int) -> list[float]:
        """NVML's samples of one series taken since ``since_us`` (none is an answer too: NVML raises
        NotFound when no sample fell in the window)."""
        pynvml, handle = self._pair()
        kind = getattr(pynvml, constant, None)
        if kind is None:
            return []
        try:
            value_type, samples = pynvml.nvmlDeviceGetSamples(handle, kind, since_us)
        except Exception as exc:  # noqa: BLE001
            if type(exc).__name__ != "NVMLError_NotFound":
                self._note(f"samples.{constant}")
            return []
        values = [_sample_value(s.sampleValue, value_type) for s in samples if int(s.timeStamp) >= since_us]
        return values[-MAX_SAMPLES:]

    def _process_utilization(self, since_us: int) -> dict[int, float]:
        """Each process's highest SM utilization (0 to 1) in NVML's samples since ``since_us``."""
        pynvml, handle = self._pair()
        try:
            samples = pynvml.nvmlDeviceGetProcessUtilization(handle, since_us)
        except Exception as exc:  # noqa: BLE001 - NotFound: no sample in the window
            if type(exc).__name__ != "NVMLError_NotFound":
                self._note("process_utilization")
            return {}
        best: dict[int, float] = {}
        for s in samples:
            if int(s.timeStamp) >= since_us:
                best[int(s.pid)] = max(best.get(int(s.pid), 0.0), float(s.smUtil) / 100)
        return best


def round_trip_spares(pids: list[int], proc: Path = Path("/proc")) -> set[int]:
    """Those of ``pids`` that are replays of this process's own round trip (the same
    :data:`TOKEN_ENV` in their environment); none outside a round trip or
    where ``/proc`` cannot be read."""
    token = os.environ.get(TOKEN_ENV)
    if not token:
        return set()
    marker = f"{TOKEN_ENV}={token}".encode()
    found = set()
    for pid in pids:
        try:
            environ = (proc / str(pid) / "environ").read_bytes()
        except OSError:
            continue
        if marker in environ.split(b"\0"):
            found.add(pid)
    return found


def _memory(process: Any) -> int | None:
    used = getattr(process, "usedGpuMemory", None)
    # NVML reports NVML_VALUE_NOT_AVAILABLE (all bits set) where it may not say, as in a container
    return int(used) if isinstance(used, int) and 0 <= used < 2**63 else None


def _sample_value(value: Any, value_type: int) -> float:
    """One ``c_nvmlValue_t`` as a number, read by the type NVML says it holds."""
    field = {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal", 5: "siVal", 6: "usVal"}.get(
        value_type, "uiVal"
    )
    return float(getattr(value, field))


def timing_conditions(run: Any, watch: DeviceWatch, warmups: Any, warnings: list[str]) -> TimingConditions:
    """The conditions of one fusion's timing: the other work its sampled run saw, NVML's window
    (:meth:`DeviceWatch.finish`), ``fd.execute``'s host time in the warm-ups
    (:class:`~fusiondiff.recording.host_time.WarmupClock`). Where NVML is missing, the capture's
    ``warnings`` get one line saying so, once."""
    missing = watch.missing
    if missing is not None and missing not in warnings:
        warnings.append(missing)
    return TimingConditions(
        other_work=run.other_work, device=watch.finish(), host=HostTiming(execute_ns=warmups.after_first)
    )
