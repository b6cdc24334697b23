# Hand translation of ../2023_max_axis.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t1 = fd.ops.max(t0, dim=0, keepdim=True, dtype=DataType.Null)
    t2 = fd.ops.sub(t0, t1)
    fd.add_output(t2)

fd.execute([torch.randn(1024, 256, device="cuda")])
