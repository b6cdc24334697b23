"""Timing one recorded execution under the protocol, for the recorder.

A :class:`Sampler` owns what timing needs for the whole recording: the protocol, the L2 flush
buffer (allocated at the first timing, released when recording ends or memory runs out) and the
kernel-record source (the one the protocol names in
:data:`fusiondiff.recording.sources.KERNEL_SOURCES`, or one given to it). It re-executes the fusion
on its input copies, with the CUDA RNG state saved and restored around it, and turns the samples
into the record's kernels, timing and segmentation. The protocol's logic itself is
:func:`fusiondiff.recording.timing.measure`, which needs no GPU.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable, Iterator
from typing import Any

from fusiondiff.recording import nvfuser_adapter as nvf
from fusiondiff.recording.bandwidth import flag_bandwidth
from fusiondiff.recording.device_watch import DeviceWatch, timing_conditions
from fusiondiff.recording.host_time import HOST_CALLS, WarmupClock
from fusiondiff.recording.sources import kernel_source_for
from fusiondiff.recording.timing import KernelSource, kernel_records, measure
from fusiondiff.records.model import NVFUSER, FusionRecord, TimingProtocol


class Sampler:
    """Times recorded executions: the protocol's samples, the kernel records, the segmentation.

    ``kernel_source`` is the source every timing uses; ``None``: a new one of the kind the
    protocol's method names, for each timing."""

    def __init__(self, protocol: TimingProtocol, kernel_source: KernelSource | None = None) -> None:
        if kernel_source is not None and kernel_source.name != protocol.method:
            raise ValueError(f"kernel_source {kernel_source.name!r} is not the protocol's timer {protocol.method!r}")
        self.protocol = protocol
        self.kernel_source = kernel_source
        self.l2_bytes: int | None = None
        """The GPU's L2 size, once the environment is read: the flush buffer is twice that."""
        self.used_profiler = False
        """A source ran in this process (and holds CUPTI for good: :meth:`cupti_notice`)."""
        self._flush_buffer: Any = None
        self._local = threading.local()

    def timing_here(self) -> bool:
        """This thread is inside a timing: an execution it makes is the timing's own."""
        return getattr(self._local, "timing", False)

    @contextlib.contextmanager
    def untraced(self) -> Iterator[None]:
        """The executions this thread makes in the block are the timing's own (the recorder's
        patched execute runs them untouched and unrecorded)."""
        self._local.timing = True
        try:
            yield
        finally:
            self._local.timing = False

    def flush_bytes(self) -> int:
        """Twice the L2 size: writing that much evicts every line a fusion could reuse."""
        return 2 * (self.l2_bytes or 64 * 2**20)

    def release(self) -> None:
        """Give back the flush buffer (allocated again at the next timing)."""
        self._flush_buffer = None

    def flush_l2(self) -> None:
        """Write the flush buffer: no input or intermediate of the next sample is left in L2."""
        self._flush_buffer.zero_()

    def _canary(self) -> None:
        self._flush_buffer[:256].zero_()

    def source(self) -> KernelSource:
        """The kernel-record source of the next timing."""
        if self.kernel_source is not None:
            return self.kernel_source
        return kernel_source_for(self.protocol.method, self._canary)

    def time(
        self,
        record: FusionRecord,
        run_once: Callable[[], None],
        fd: Any,
        copies: list[Any],
        keep_cuda_source: bool,
        warnings: list[str],
    ) -> FusionRecord:
        """``record`` with its kernels, timing, segmentation, clocks and the conditions it was timed
        in, from samples of ``run_once`` (an execution of ``fd`` on ``copies``); what concerns the
        whole capture (NVML missing) goes to its ``warnings``, once."""
        import torch

        if self._flush_buffer is None:
            self._flush_buffer = torch.empty(self.flush_bytes(), dtype=torch.uint8, device="cuda")
            self.protocol = dataclasses.replace(self.protocol, flush_bytes=self.flush_bytes())
        rng_states = torch.cuda.get_rng_state_all()
        self._local.timing = True  # not untraced(): the RNG state is restored in the same finally
        try:
            source = self.source()
            self.used_profiler = True
            # NVML before, while the kernels run, after (the SM clock, reasons and counters beside)
            watch, warmups = DeviceWatch(record.device_index), WarmupClock(run_once, self.protocol.warmup)
            warmups.host_calls(HOST_CALLS)
            run = measure(warmups, self.protocol, source, self.flush_l2, torch.cuda.synchronize, watch.read_clock)
            conditions = timing_conditions(run, watch, warmups, warnings)
            ir = nvf.scheduled_ir(fd)
            sources, source_warning = nvf.cuda_sources(fd, copies, record.device_index)
        finally:
            self._local.timing = False
            torch.cuda.set_rng_state_all(rng_states)
        kernels, timing, kernel_warnings = kernel_records(run, nvf.source_hashes(sources), timer=source.name)
        if source_warning:
            kernel_warnings.append(source_warning)
        if not kernels:
            kernel_warnings.append("the fusion launched no kernels (expression-evaluator segments only)")
        segmentation = nvf.parse_segmentation(ir, [k.name for k in kernels])
        return flag_bandwidth(
            dataclasses.replace(
                record,
                kernels=kernels,
                timing=timing,
                segmentation=segmentation,
                cuda_sources=sources if keep_cuda_source else {},
                sm_clock_mhz=run.clock_mhz,
                warnings=record.warnings + tuple(kernel_warnings),
                conditions=conditions,
            )
        )

    def cupti_notice(self) -> str | None:
        """What the source that ran left in this process: the profiler it used holds CUPTI for good
        (``None`` while none ran)."""
        if not self.used_profiler:
            return None
        if self.protocol.method == NVFUSER:
            return (
                "fusiondiff: nvFuser's PythonProfiler (CUPTI) was used in this process: torch.profiler sees no "
                "kernel events in it afterwards"
            )
        return (
            "fusiondiff: torch.profiler (CUPTI) was used in this process: nvFuser's PythonProfiler cannot run "
            "in it afterwards"
        )
