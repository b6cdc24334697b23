# Hand translation of ../2023_define_constant.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.from_pytorch(torch.empty(128, 256, device="cuda"))
    c0 = fd.define_scalar(3.0)
    c1 = fd.define_scalar(value=0.5, dtype=DataType.Double)
    t1 = fd.ops.mul(t0, c0)
    t2 = fd.ops.add(t1, c1)
    fd.add_output(t2)

fd.execute([torch.randn(128, 256, device="cuda")])
