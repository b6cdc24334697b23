"""A small LayerNorm under thunderfx whose activation sits at storage offset 1 (2-byte aligned), for
`fusiondiff capture` (issue #39's case (a): small kernels, so Thunder's call takes longer on the host
than its kernels on the GPU).

    fusiondiff capture repro/ledger/layernorm_offset.py -o live.json --save-inputs
    fusiondiff capture repro/ledger/layernorm_offset.py -o live.json -- --offset 0   # the aligned control
"""

from __future__ import annotations

import argparse

import torch
from thunder.dynamo import thunderfx


class Block(torch.nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(self.norm(x))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1024)
    parser.add_argument("--hidden", type=int, default=2048)
    parser.add_argument("--offset", type=int, default=1, help="storage offset of the activation, in elements")
    parser.add_argument("--calls", type=int, default=3)
    args = parser.parse_args()
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = Block(args.hidden).to(torch.bfloat16)
        storage = torch.randn(args.rows * args.hidden + args.offset, dtype=torch.bfloat16)
    x = storage[args.offset :].view(args.rows, args.hidden)
    compiled = thunderfx(model)
    for _ in range(args.calls):
        y = compiled(x)
    torch.cuda.synchronize()
    print(f"layernorm at offset {args.offset}: {tuple(y.shape)} {float(y.float().abs().mean()):.4f}")


if __name__ == "__main__":
    main()
