"""What both timingtest scripts print beside the seed's number, for one FusionDefinition and its inputs.

The seed's measurement (``kernel_time_with_torch_profiler``, kept verbatim in each script) returns a
sum over every profiler event. This shows what that sum held, how it spreads when repeated, and
fusiondiff's protocol on the same fusion and inputs, written to a capture file.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import fusiondiff
from fusiondiff.records.model import TimingProtocol


def report_beside_seed(
    seed_timer: Callable[[Callable[[Any], Any], Any], tuple[float, Any]],
    fd: Any,
    inputs: list[Any],
    path_label: str,
    default_output: str,
) -> None:
    """Print the seed method's number and its breakdown, then capture ``fd`` under the protocol
    (to ``sys.argv[1]`` or ``default_output``). ``path_label`` names the path in every line."""
    kernel_time, prof = seed_timer(fd.execute, inputs)
    print(f"seed method ({path_label}): {kernel_time:.3f} us")

    kernels = [e for e in prof.events() if e.device_type.name == "CUDA"]
    print(
        f"  its profile held {len(list(prof.events()))} events, {len(kernels)} kernel(s): "
        + ", ".join(f"{e.name.split('(')[0]} {e.device_time:.3f} us" for e in kernels)
    )
    repeats = sorted(seed_timer(fd.execute, inputs)[0] for _ in range(10))
    print(
        f"  seed method repeated 10x ({path_label}): min {repeats[0]:.3f}, "
        f"median {(repeats[4] + repeats[5]) / 2:.3f}, max {repeats[-1]:.3f} us"
    )

    output = sys.argv[1] if len(sys.argv) > 1 else default_output
    with fusiondiff.capture(output, protocol=TimingProtocol(warmup=5, samples=30, l2_mode="cold")) as cap:
        fd.execute(inputs)
    fusion = cap.capture.fusions[0]
    print(
        f"fusiondiff protocol ({path_label}): {fusion.timing.median_ns / 1000:.3f} us median, "
        f"iqr {fusion.timing.iqr_ns / 1000:.3f} us over {fusion.timing.count} cold-L2 samples; kernels "
        + ", ".join(
            f"{k.normalized_name} grid {k.launch.grid} block {k.launch.block} regs {k.launch.registers_per_thread}"
            for k in fusion.kernels
        )
    )
    print(f"wrote {cap.path}")
