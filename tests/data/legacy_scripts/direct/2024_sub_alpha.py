# Hand translation of ../2024_sub_alpha.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False)
    S2 = fd.define_scalar(3.00000, dtype=DataType.Double)
    T3 = fd.ops.sub(T0, fd.ops.mul(T1, S2))
    T4 = fd.ops.exp(T3)
    fd.add_output(T4)

fd.execute([torch.randn(1 << 20, device="cuda"), torch.randn(1 << 20, device="cuda")])
