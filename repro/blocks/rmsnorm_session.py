"""The seed RMSNorm (bf16 [4, 1024, 4096]) under thunder.jit, for `fusiondiff capture --sm-timeline`.

    fusiondiff capture repro/blocks/rmsnorm_session.py --offset 1 --save-inputs --sm-timeline -o live.json

``--offset 1`` puts the activation at storage offset 1 (2-byte aligned), as in Thunder issue #1869.
``--matmuls`` keeps a second CUDA stream busy with large bf16 matmuls, from a thread, while the
fusion runs (and while fusiondiff times it and records its timeline, right after its first call).
"""

from __future__ import annotations

import argparse
import threading
import time

import thunder
import torch


def rmsnorm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (y * w.float()).to(x.dtype)


def busy_matmuls(stop: threading.Event, started: threading.Event, size: int) -> None:
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
        started.set()
        while not stop.is_set():
            for _ in range(4):
                a = (a @ b) * 1e-3
            stream.synchronize()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--offset", type=int, default=0, help="storage offset of the activation (elements)")
    parser.add_argument("--matmuls", action="store_true", help="run large matmuls on a second stream meanwhile")
    parser.add_argument("--size", type=int, default=8192, help="matmul size")
    args = parser.parse_args()
    torch.manual_seed(0)
    n = 4 * 1024 * 4096
    x = torch.randn(n + args.offset, dtype=torch.bfloat16, device="cuda")[args.offset :].view(4, 1024, 4096)
    w = torch.randn(4096, dtype=torch.bfloat16, device="cuda")
    jitted = thunder.jit(rmsnorm)
    stop, started = threading.Event(), threading.Event()
    worker = None
    if args.matmuls:
        worker = threading.Thread(target=busy_matmuls, args=(stop, started, args.size), daemon=True)
        worker.start()
        started.wait()
        time.sleep(0.5)
    for _ in range(3):
        out = jitted(x, w)
    torch.cuda.synchronize()
    stop.set()
    if worker is not None:
        worker.join()
    print("checksum", out.float().sum().item())


if __name__ == "__main__":
    main()
