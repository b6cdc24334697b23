# Hand translation of ../2023_operators.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    s0 = fd.define_scalar(2.0, dtype=DataType.Double)
    t2 = fd.ops.mul(fd.ops.add(t0, t1), s0)
    t3 = fd.ops.div(fd.ops.neg(t2), s0)
    t4 = fd.ops.abs(fd.ops.sub(t3, t0))
    fd.add_output(t4)

inputs = [torch.randn(1024, 512, device="cuda"), torch.randn(1024, 512, device="cuda")]
fd.execute(inputs)
