"""Benchmark: ``fusiondiff.diff.diff`` on two synthetic captures of 10,000 kernels each.

Target: <= 1 s on a 2-core CPU machine. Each capture holds 1,000 fusions x 10 kernels x 30 samples
(records built in code by ``tests/synthetic.py``, not recorded). Side B differs the way a
replay does: every kernel's fusion index ``f`` differs (history), and one fusion in ten has an
offset input, another kernel variant and a slower kernel, so matching, DeepDiff, the U test and
every rule do real work. Prints the best of three wall times and its ratio to the target.

Two stress lines follow, for the record, not for the target: every fusion and every kernel
differing the same way (as a model's repeated layers would), and every one of them differing in
its own way, which defeats the memoised DeepDiff calls (about 0.25 ms each).

    python3 benchmarks/bench_diff.py
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

from fusiondiff.diff import diff
from fusiondiff.records.model import Capture, LaunchConfig

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # the record builders
import synthetic as syn  # noqa: E402

TARGET_S = 1.0
FUSIONS = 1_000
KERNELS_PER_FUSION = 10
SAMPLES = 30


def _definition(index: int) -> str:
    # A distinct definition (and hash) per fusion, as the regions of a real program have.
    return syn.RMSNORM_DEFINITION.replace("def nvfuser_fusion(", f"def nvfuser_fusion_{index}(")


def build_captures() -> tuple[Capture, Capture]:
    """Live-like A and replay-like B with 10,000 kernels each."""
    fusions_a, fusions_b = [], []
    slow_launch = LaunchConfig(grid=(4096, 1, 1), block=(512, 1, 1), shared_mem_bytes=0, registers_per_thread=31)
    for f in range(FUSIONS):
        changed = f % 10 == 0
        kernels_a, kernels_b = [], []
        for g in range(KERNELS_PER_FUSION):
            scheduler = "reduction" if g % 2 else "pointwise"
            median = 2_000.0 + 300.0 * g
            seed = f * KERNELS_PER_FUSION + g
            kernels_a.append(syn.kernel(scheduler, g, median_ns=median, n=SAMPLES, seed=seed, fusion_index=f))
            slow = changed and g == 0
            kernels_b.append(
                syn.kernel(
                    scheduler,
                    g,
                    median_ns=median * (1.5 if slow else 1.0),
                    n=SAMPLES,
                    seed=seed + 10**6,
                    fusion_index=0,  # a replay compiles one fusion per process: f0 everywhere
                    runtime=1 if slow else 0,
                    launch=slow_launch if slow else None,
                )
            )
        fa = syn.fusion(f"nvFusion{f}", kernels=kernels_a, definition=_definition(f))
        fb = syn.fusion(f"nvFusion{f}", kernels=kernels_b, definition=_definition(f))
        if changed:
            offset = dataclasses.replace(fb.inputs[0], storage_offset=1, alignment_bytes=2)
            fb = dataclasses.replace(fb, inputs=(offset, *fb.inputs[1:]))
        fusions_a.append(fa)
        fusions_b.append(fb)
    return syn.capture(fusions_a, source="synthetic: bench A"), syn.capture(
        fusions_b, kind="replay", source="synthetic: bench B"
    )


def every_record_differs(b: Capture, distinct: bool) -> Capture:
    """B with an offset input in every fusion and another block size in every kernel; with
    ``distinct``, every offset and block size is different from every other."""
    fusions = []
    for f_index, f in enumerate(b.fusions):
        offset = dataclasses.replace(f.inputs[0], storage_offset=1 + (f_index if distinct else 0), alignment_bytes=2)
        kernels = tuple(
            dataclasses.replace(
                k, launch=dataclasses.replace(k.launch, block=(f_index * 10 + g + 1 if distinct else 512, 1, 1))
            )
            for g, k in enumerate(f.kernels)
        )
        fusions.append(dataclasses.replace(f, inputs=(offset, *f.inputs[1:]), kernels=kernels))
    return dataclasses.replace(b, fusions=tuple(fusions))


def best_of(runs: int, a: Capture, b: Capture) -> float:
    """Best wall time of ``runs`` diffs, in seconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        diff(a, b)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    a, b = build_captures()
    kernels = sum(len(f.kernels) for f in a.fusions)
    seconds = best_of(3, a, b)
    result = diff(a, b)
    print(
        f"diff of {len(a.fusions)} fusions / {kernels} kernels x {SAMPLES} samples a side: "
        f"{seconds:.3f} s (best of 3); target {TARGET_S:.1f} s; ratio diff/target = {seconds / TARGET_S:.3f}; "
        f"{len(result.findings)} findings"
    )
    for label, distinct in (("repeating", False), ("all distinct", True)):
        stressed = every_record_differs(b, distinct)
        print(f"  stress, every fusion and kernel differs ({label}): {best_of(3, a, stressed):.3f} s (best of 3)")


if __name__ == "__main__":
    main()
