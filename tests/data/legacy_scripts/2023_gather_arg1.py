# 2023-2025: gather(arg1, index, dim) and take_along_axis(arg1, index, dim) named their input arg1;
# nvfuser_direct names it arg (python_direct/ops.cpp).
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    i0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int)
    t1 = fd.ops.gather(arg1=t0, index=i0, dim=1)
    fd.add_output(t1)

inputs = [torch.randn(256, 64, device="cuda"), torch.randint(0, 64, (256, 16), device="cuda")]
fd.execute(inputs)
