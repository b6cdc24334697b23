# Hand translation of ../2025_triu_input.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.ops.triu(arg=T0, diagonal=1)
    T2 = fd.ops.mul(T1, T1)
    fd.add_output(T2)

fd.execute([torch.randn(1024, 1024, device="cuda")])
