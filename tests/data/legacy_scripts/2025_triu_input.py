# 2025: triu(input, diagonal) (e057a9bac 2025-01-08); direct names the tensor arg.
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.ops.triu(input=T0, diagonal=1)
    T2 = fd.ops.mul(T1, T1)
    fd.add_output(T2)

fd.execute([torch.randn(1024, 1024, device="cuda")])
