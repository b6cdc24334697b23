"""Benchmark: live capture of the seed model's 13 forward fusions, 30 cold-L2 samples each.

Target (issue 3): <= 40 s wall time on the H200 after compilation. Prints the capture's wall time,
the plain forward's for reference, and the ratio to the target, measured side by side in one run.

    source .gpu/activate.sh && python3 benchmarks/bench_capture.py
"""

from __future__ import annotations

import time
from typing import Any

TARGET_S = 40.0


def measure_capture(compiled: Any, idx: Any, samples: int = 30) -> dict[str, float]:
    """Wall times of one plain forward and of one captured forward (the model is already compiled)."""
    import torch

    from fusiondiff.front.live import capture
    from fusiondiff.records.model import TimingProtocol

    torch.cuda.synchronize()
    start = time.perf_counter()
    compiled(idx)
    torch.cuda.synchronize()
    plain = time.perf_counter() - start
    start = time.perf_counter()
    with capture(protocol=TimingProtocol(samples=samples, l2_mode="cold")) as cap:
        compiled(idx)
    torch.cuda.synchronize()
    captured = time.perf_counter() - start
    assert cap.capture is not None
    return {"fusions": len(cap.capture.fusions), "plain_s": plain, "capture_s": captured}


def report(result: dict[str, float]) -> str:
    return (
        f"capture of {result['fusions']:.0f} fusions x 30 cold samples: {result['capture_s']:.2f} s "
        f"(plain forward {result['plain_s']:.3f} s); target {TARGET_S:.0f} s; "
        f"ratio capture/target = {result['capture_s'] / TARGET_S:.3f}"
    )


def main() -> None:
    from fusiondiff.front.seed import build_seed_model

    _, compiled, idx = build_seed_model()
    compiled(idx)  # compile first: the target is for capture after compilation
    print(report(measure_capture(compiled, idx)))


if __name__ == "__main__":
    main()
