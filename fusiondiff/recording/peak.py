"""The GPU's DRAM bandwidth, measured where the capture is recorded (issue #43).

A kernel's achieved bandwidth means something only against what its GPU can deliver, and a
vendor's figure is not that: boards of one name differ in memory clock and the achievable share of
the pin bandwidth. So each capture measures its GPU once, when recording ends (nothing of the
session runs beside it): a buffer several times the L2 is copied device to device, each copy reads
and writes every byte once, and the median of the timed copies (CUDA events) is the peak. The
figure and how it was taken go into ``Environment.peak_bandwidth``; ``--no-peak`` leaves it out.

The buffers are the caching allocator's: freed afterwards, their memory stays cached for the
session to reuse. Where the GPU has no room for them, nothing is measured and the capture says why.
"""

from __future__ import annotations

import dataclasses
import statistics
import time

from fusiondiff.records.environment import Environment, PeakBandwidth
from fusiondiff.records.errors import exception_line
from fusiondiff.records.progress import Progress

COPY_BYTES = 1 << 30
"""The copied buffer: 1 GiB, many times any L2 (60 MiB on an H200), so the copy streams from DRAM."""
MIN_COPY_BYTES = 1 << 28
"""The smallest buffer measured when memory is short (256 MiB); below that, nothing is measured."""
WARMUPS = 3
COPIES = 20


def copy_bytes_for(free_bytes: int, l2_bytes: int | None) -> int | None:
    """The buffer size to measure with, given the free device memory (two buffers and a quarter of
    the free memory left over), or ``None`` when even the smallest does not fit."""
    smallest = max(MIN_COPY_BYTES, 4 * (l2_bytes or 0))
    size = COPY_BYTES
    while size >= smallest:
        if 2 * size <= free_bytes * 3 // 4:
            return size
        size //= 2
    return None


def measure_peak(device_index: int, l2_bytes: int | None) -> tuple[PeakBandwidth | None, str | None]:
    """``(the measured peak, None)``, or ``(None, why not)`` when the GPU has no room for the buffers."""
    import torch

    start = time.perf_counter()
    with torch.cuda.device(device_index):
        free, _ = torch.cuda.mem_get_info()
        size = copy_bytes_for(free, l2_bytes)
        if size is None:
            return None, f"peak bandwidth not measured: {free / 2**20:.0f} MiB free on the GPU is too little"
        try:
            src = torch.empty(size, dtype=torch.uint8, device=torch.device("cuda", device_index))
            dst = torch.empty_like(src)
        except torch.OutOfMemoryError:
            return None, "peak bandwidth not measured: the GPU ran out of memory for the copy buffers"
        try:
            src.fill_(1)
            for _ in range(WARMUPS):
                dst.copy_(src)
            events = [
                (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(COPIES)
            ]
            for begin, end in events:
                begin.record()
                dst.copy_(src)
                end.record()
            torch.cuda.synchronize()
            figures = [2 * size / (begin.elapsed_time(end) * 1e-3) / 1e9 for begin, end in events]
        finally:
            del src, dst
    return (
        PeakBandwidth(
            gbs=statistics.median(figures),
            best_gbs=max(figures),
            copy_bytes=size,
            copies=COPIES,
            seconds=time.perf_counter() - start,
        ),
        None,
    )


def with_peak(environment: Environment, warnings: list[str], progress: Progress) -> Environment:
    """``environment`` with its GPU's measured DRAM bandwidth; where it cannot be measured,
    unchanged, and ``warnings`` says why (a capture's records are kept whatever happens here)."""
    try:
        peak, why_not = measure_peak(environment.cuda_device_index or 0, environment.l2_bytes)
    except Exception as exc:  # noqa: BLE001 - a measurement that fails must not cost the capture
        peak, why_not = None, f"peak bandwidth not measured: {exception_line(exc)}"
    if why_not is not None:
        warnings.append(why_not)
    if peak is None:
        return environment
    progress(f"fusiondiff: the GPU's DRAM bandwidth (a device-to-device copy): {peak.gbs:.0f} GB/s")
    return dataclasses.replace(environment, peak_bandwidth=peak)
