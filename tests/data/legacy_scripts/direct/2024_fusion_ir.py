# Hand translation of ../2024_fusion_ir.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t2 = fd.ops.where(fd.ops.gt(t0, t1), t0, t1)
    fd.add_output(t2)

print(fd.fusion.print_math())
fd.execute([torch.randn(640, 480, device="cuda"), torch.randn(640, 480, device="cuda")])
