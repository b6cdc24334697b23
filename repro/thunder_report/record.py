"""A thunderfx program whose live activation sits at storage offset 1, captured by fusiondiff, and
the folders Thunder's own tools write for the same program (issue #52's recording).

    python3 repro/thunder_report/record.py OUT [--rows 4096 --hidden 4096]

writes, under OUT:
- ``live.json``: ``fusiondiff.capture`` around three calls of the compiled program;
- ``thunder/report/``: ``thunderfx_benchmark_report(..., compare_fusion=True)`` with
  ``time_rtol=0`` (Thunder writes a region's nvFuser and inductor benchmark scripts only when their
  medians differ by more than ``time_rtol``; 0 keeps every region's), and ``thunder/report.txt``,
  what it printed (Thunder's WallTime and KernelTime figures per graph and region);
- ``thunder/repros/``: ``save_thunderfx_repros(..., save_fusion=True)``, each nvFusion region's
  ``*_repro_nvfuser.py`` in nested graph folders.

The program: a residual add, RMSNorm and a SiLU gate, bf16 [rows, hidden], the activation a view at
storage offset 1 of a larger buffer (2-byte aligned), as a slice of a packed tensor is.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

import torch
from thunder.dynamo import thunderfx
from thunder.dynamo.report import save_thunderfx_repros, thunderfx_benchmark_report

import fusiondiff


def block(x: torch.Tensor, r: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``h = x + r``; RMSNorm of ``h`` scaled by ``w``, gated by SiLU of ``h``; returns both."""
    h = x + r
    hf = h.float()
    y = hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()
    return h, (y * torch.nn.functional.silu(hf)).to(x.dtype)


class Tee:
    """A text stream that writes to a file and to stdout (Thunder's ``stream=``)."""

    def __init__(self, path: Path):
        self._file = path.open("w")

    def write(self, text: str) -> int:
        sys.stdout.write(text)
        return self._file.write(text)

    def flush(self) -> None:
        sys.stdout.flush()
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--hidden", type=int, default=4096)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    with torch.device("cuda"):
        packed = torch.randn(args.rows * args.hidden + 1, dtype=torch.bfloat16)
        x = packed[1:].view(args.rows, args.hidden)
        r = torch.randn(args.rows, args.hidden, dtype=torch.bfloat16)
        w = torch.randn(args.hidden, dtype=torch.bfloat16)
    print(f"x: storage offset {x.storage_offset()}, data pointer % 16 = {x.data_ptr() % 16}")

    compiled = thunderfx(block)
    with fusiondiff.capture(args.out / "live.json"):
        for _ in range(3):
            compiled(x, r, w)
    torch.cuda.synchronize()

    thunder = args.out / "thunder"
    thunder.mkdir(exist_ok=True)
    with contextlib.closing(Tee(thunder / "report.txt")) as stream:
        thunderfx_benchmark_report(block, thunder / "report", compare_fusion=True, time_rtol=0.0, stream=stream)(
            x, r, w
        )
        save_thunderfx_repros(block, thunder / "repros", save_fusion=True, stream=stream, force_overwrite=True)(x, r, w)
    print("written:", *sorted(str(p.relative_to(args.out)) for p in thunder.rglob("*.py")), sep="\n  ")


if __name__ == "__main__":
    main()
