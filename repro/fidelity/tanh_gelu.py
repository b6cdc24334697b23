"""A pointwise tanh-GELU under thunder.jit, nothing planted: the control of the round trip."""

import thunder
import torch


def gelu(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(x, approximate="tanh")


x = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16)
out = thunder.jit(gelu)(x)
torch.cuda.synchronize()
print("checksum", float(out.float().sum()))
