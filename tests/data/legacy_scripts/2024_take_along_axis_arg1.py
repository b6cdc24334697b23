# 2023-2025: take_along_axis(arg1, index, dim) (967e30297 2023-04-28); direct names it arg.
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Int, is_cpu=False)
    T2 = fd.ops.take_along_axis(arg1=T0, index=T1, dim=1)
    fd.add_output(T2)

inputs = [torch.randn(4096, 128, device="cuda"), torch.randint(0, 128, (4096, 1), device="cuda")]
fd.execute(inputs)
