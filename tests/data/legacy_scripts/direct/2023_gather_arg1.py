# Hand translation of ../2023_gather_arg1.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    i0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int)
    t1 = fd.ops.gather(arg=t0, index=i0, dim=1)
    fd.add_output(t1)

inputs = [torch.randn(256, 64, device="cuda"), torch.randint(0, 64, (256, 16), device="cuda")]
fd.execute(inputs)
