# Hand translation of ../2024_add_alpha.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    S2 = fd.define_scalar(0.100000, dtype=DataType.Double)
    T3 = fd.ops.add(T0, fd.ops.mul(T1, S2))
    fd.add_output(T3)

fd.execute([torch.randn(2048, 512, device="cuda"), torch.randn(2048, 512, device="cuda")])
