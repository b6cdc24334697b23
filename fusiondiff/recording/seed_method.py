"""The seed issue's measurement, kept as a kernel source so it can be compared with the protocol.

Thunder issue #1869 timed a fusion with: 5 warm-ups, then ONE call under ``torch.profiler`` with
CUDA activities, and the sum of ``device_time`` over every profiler event. That sum is not a
kernel time: it is one sample, with no L2 control and no synchronization, and after another CUPTI
subscriber ran in the process it silently reads 0.0. fusiondiff records it as it is (method
``seed-sum-of-all-events``) so the differ can say why it cannot be trusted.
"""

from __future__ import annotations

from collections.abc import Callable

from fusiondiff.recording import cupti_owner
from fusiondiff.recording.timing import KernelEvent, KernelSource, SampledRun
from fusiondiff.records.model import SEED_METHOD, LaunchConfig, TimingProtocol

SEED_PROTOCOL = TimingProtocol(method=SEED_METHOD, warmup=5, samples=1, l2_mode="warm")
"""The seed's measurement as a protocol: 5 warm-ups, one profiled call, no L2 flush."""


class SeedMethodSource(KernelSource):
    """One profiled call per sample; the sample's time is the sum of every event's device_time."""

    name = SEED_METHOD

    def sample(self, run_once: Callable[[], object], before_sample: Callable[[], None], count: int) -> SampledRun:
        from torch.profiler import ProfilerActivity, profile

        cupti_owner.claim(self.name)
        samples, totals, warnings = [], [], []
        for _ in range(count):
            before_sample()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                run_once()
            events = list(prof.events())
            totals.append(1000.0 * sum(e.device_time for e in events))
            kernels = [e for e in events if e.device_type.name == "CUDA"]
            if not kernels:
                warnings.append(
                    "the seed method read no kernel events: its sum is 0 (CUPTI held by another subscriber?)"
                )
            samples.append(
                tuple(
                    KernelEvent(
                        name=e.name,
                        start_ns=1000.0 * e.time_range.start,
                        duration_ns=1000.0 * e.device_time,
                        launch=LaunchConfig(grid=None, block=None),
                    )
                    for e in kernels
                )
            )
        return SampledRun(
            samples=tuple(samples), warnings=tuple(dict.fromkeys(warnings)), fusion_samples_ns=tuple(totals)
        )
