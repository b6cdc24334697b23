# Today (nvFuser 0.2.36): Python numbers passed straight to ops, which direct accepts; no operators.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t1 = fd.ops.mul(fd.ops.add(t0, 1.0), 0.5)
    t2 = fd.ops.var(t1, dims=[0], correction=1, keepdim=False)
    fd.add_output(t2)

fd.execute([torch.randn(2048, 2048, device="cuda")])
