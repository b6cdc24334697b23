# Hand translation of ../2024_take_along_axis_arg1.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Int, is_cpu=False)
    T2 = fd.ops.take_along_axis(arg=T0, index=T1, dim=1)
    fd.add_output(T2)

inputs = [torch.randn(4096, 128, device="cuda"), torch.randint(0, 128, (4096, 1), device="cuda")]
fd.execute(inputs)
