"""A LayerNorm + SiLU session (bf16 [32768, 8192], one nvFusion) under thunder.jit, for
`fusiondiff capture` (issue #27's scenarios):

    fusiondiff capture repro/environment/layernorm_session.py -o live.json                  # the clean control
    fusiondiff capture repro/environment/layernorm_session.py -o live.json -- --busy-stream # other work in the process

``--busy-stream`` keeps a second CUDA stream busy with bf16 matmuls, from a thread, while the
session's fusion runs (and while fusiondiff times it, right after its first call): the planted cause
of the first scenario. The second runs the clean session while `busy_gpu.py` keeps the GPU busy
from another process.
"""

from __future__ import annotations

import argparse
import threading
import time

import thunder
import torch


def layernorm_silu(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    y = torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, 1e-5)
    return torch.nn.functional.silu(y)


def busy_matmuls(stop: threading.Event, started: threading.Event, size: int) -> None:
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
        started.set()
        while not stop.is_set():
            for _ in range(8):
                a = (a @ b) * 1e-3
            stream.synchronize()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=32768)
    parser.add_argument("--hidden", type=int, default=8192)
    parser.add_argument("--calls", type=int, default=3, help="calls of the jitted function (the first compiles)")
    parser.add_argument("--busy-stream", action="store_true", help="bf16 matmuls on a second stream meanwhile")
    parser.add_argument("--size", type=int, default=8192, help="matmul size of the busy stream")
    args = parser.parse_args()
    torch.manual_seed(0)
    x = torch.randn(args.rows, args.hidden, dtype=torch.bfloat16, device="cuda")
    w = torch.randn(args.hidden, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(args.hidden, dtype=torch.bfloat16, device="cuda")
    jitted = thunder.jit(layernorm_silu)
    stop, started = threading.Event(), threading.Event()
    worker = None
    if args.busy_stream:
        worker = threading.Thread(target=busy_matmuls, args=(stop, started, args.size), daemon=True)
        worker.start()
        started.wait()
        time.sleep(0.5)
    for _ in range(args.calls):
        out = jitted(x, w, b)
    torch.cuda.synchronize()
    stop.set()
    if worker is not None:
        worker.join()
    print("checksum", out.float().sum().item())


if __name__ == "__main__":
    main()
