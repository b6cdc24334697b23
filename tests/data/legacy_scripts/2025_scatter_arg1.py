# 2025: scatter(arg1, index, src, dim) (0d3a66ef0 2025-06-03); direct names the tensor arg.
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int, is_cpu=False)
    T2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T3 = fd.ops.scatter(arg1=T0, index=T1, src=T2, dim=1)
    fd.add_output(T3)

inputs = [
    torch.zeros(64, 512, device="cuda"),
    torch.argsort(torch.rand(64, 512, device="cuda"), dim=1)[:, :256].contiguous(),
    torch.randn(64, 256, device="cuda"),
]
fd.execute(inputs)
