# Hand translation of ../2025_fusion_definition_arguments.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    T1 = fd.ops.cumsum(T0, dim=1)
    fd.add_output(T1)

fd.execute([torch.randn(64, 1024, device="cuda")])
