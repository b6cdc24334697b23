"""A new user's session (not in the repo): GELU-tanh gate * sigmoid, LayerNorm, softmax in fp32,
under thunderfx (torch.compile with Thunder's backend)."""
import argparse

import torch
from thunder.dynamo import thunderfx


def block(x, w, b):
    h = torch.nn.functional.gelu(x, approximate="tanh") * torch.sigmoid(x)
    h = torch.nn.functional.layer_norm(h, (h.shape[-1],), w, b, 1e-5)
    return torch.softmax(h.float(), dim=-1).to(x.dtype)


p = argparse.ArgumentParser()
p.add_argument("--rows", type=int, default=16384)
p.add_argument("--hidden", type=int, default=6144)
a = p.parse_args()
torch.manual_seed(1)
x = torch.randn(a.rows, a.hidden, dtype=torch.bfloat16, device="cuda")
w = torch.rand(a.hidden, dtype=torch.bfloat16, device="cuda")
b = torch.rand(a.hidden, dtype=torch.bfloat16, device="cuda")
f = thunderfx(block)
for _ in range(3):
    y = f(x, w, b)
torch.cuda.synchronize()
print("opmix:", tuple(y.shape), float(y.float().sum()))
