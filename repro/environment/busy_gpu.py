"""Another process that keeps the GPU busy with bf16 matmuls for a while (issue #27's second
scenario): ``python3 busy_gpu.py --seconds 90 --ready FILE``; FILE is written once it runs."""

from __future__ import annotations

import argparse
import pathlib
import time

import torch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=90.0, help="stop after this long")
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--ready", type=pathlib.Path, help="written once the first matmuls ran")
    args = parser.parse_args()
    a = torch.randn(args.size, args.size, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(args.size, args.size, device="cuda", dtype=torch.bfloat16)
    end = time.monotonic() + args.seconds
    rounds = 0
    while time.monotonic() < end:
        for _ in range(8):
            a = (a @ b) * 1e-3
        torch.cuda.synchronize()
        rounds += 1
        if rounds == 1 and args.ready is not None:
            args.ready.write_text("running\n")
    print(f"busy_gpu: {rounds} rounds of 8 matmuls")


if __name__ == "__main__":
    main()
