"""An embedding gather followed by a scale, under thunder.jit: the fusion whose nvFuser repro
crashes (``make_tensor`` draws int64 ids in about [-9, 10) for a 128256-row table)."""

import thunder
import torch


def gather_and_scale(idx: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.embedding(idx, table) * 2.0


table = torch.randn(128256, 1024, device="cuda", dtype=torch.bfloat16)
idx = torch.randint(0, 128256, (4, 1024), device="cuda")
out = thunder.jit(gather_and_scale)(idx, table)
torch.cuda.synchronize()
print("checksum", float(out.float().sum()))
