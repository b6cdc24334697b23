"""Benchmark (GPU): what measuring the peak DRAM bandwidth adds to a capture (issue #43: under 1 s).

Two figures, side by side in one run on the GPU at hand:

1. ``measure_peak`` alone, called as the recorder calls it when recording ends (CUDA already
   initialised), ``--rounds`` times: its wall time, and the peak it measured, at each buffer size
   it may pick (1 GiB, 512 MiB, 256 MiB) against a 2 GiB copy;
2. a whole ``fusiondiff capture`` of a small LayerNorm (repro/ledger/layernorm_offset.py), with
   and without ``--no-peak``, alternating, ``--rounds`` each: the medians and their difference.

    python3 benchmarks/bench_peak.py --rounds 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def peak_alone(rounds: int) -> None:
    import torch

    from fusiondiff.recording import peak

    torch.zeros(1, device="cuda")  # the session's CUDA context exists when recording ends
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    seconds, figures = [], []
    for _ in range(rounds):
        measured, why = peak.measure_peak(0, l2)
        assert measured is not None, why
        seconds.append(measured.seconds)
        figures.append(measured.gbs)
    print(
        f"{torch.cuda.get_device_name(0)}: measure_peak over {rounds} rounds: "
        f"median {statistics.median(seconds):.3f} s (max {max(seconds):.3f} s), "
        f"peak median {statistics.median(figures):.0f} GB/s (spread {min(figures):.0f}-{max(figures):.0f})"
    )
    default = peak.COPY_BYTES
    for size in (2 * default, default, default // 2, default // 4):
        peak.COPY_BYTES = size
        peak.MIN_COPY_BYTES = min(peak.MIN_COPY_BYTES, size)
        measured, why = peak.measure_peak(0, l2)
        assert measured is not None, why
        print(
            f"  copy of {size / 2**20:.0f} MiB: {measured.gbs:.0f} GB/s median, {measured.best_gbs:.0f} best, "
            f"{measured.seconds:.3f} s"
        )
    peak.COPY_BYTES = default


def capture_once(out: Path, peak: bool) -> float:
    command = [
        sys.executable,
        "-m",
        "fusiondiff",
        "capture",
        str(ROOT / "repro/ledger/layernorm_offset.py"),
        "-o",
        str(out),
        "--samples",
        "10",
    ]
    if not peak:
        command.append("--no-peak")
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, cwd=ROOT, env={**os.environ})
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    peak_alone(args.rounds)
    with tempfile.TemporaryDirectory() as tmp:
        with_peak, without = [], []
        for i in range(args.rounds):
            without.append(capture_once(Path(tmp) / f"n{i}.json", peak=False))
            with_peak.append(capture_once(Path(tmp) / f"p{i}.json", peak=True))
    a, b = statistics.median(without), statistics.median(with_peak)
    print(
        f"capture (LayerNorm under thunderfx, {args.rounds} rounds each, alternating): --no-peak {a:.2f} s, "
        f"with the peak {b:.2f} s: +{b - a:.2f} s ({b / a:.3f}x)"
    )


if __name__ == "__main__":
    main()
