# Hand translation of ../2024_disable_automatic_serialization.py for nvfuser_direct.
import torch
import nvfuser_direct as nvfuser
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
    t1 = fd.ops.sin(t0)
    fd.add_output(t1)

fd.execute([torch.randn(1 << 22, device="cuda")])
