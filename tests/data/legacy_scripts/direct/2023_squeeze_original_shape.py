# Hand translation of ../2023_squeeze_original_shape.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, 1, -1], contiguity=[True, None, True], dtype=DataType.Float)
    t1 = fd.ops.squeeze(t0, dims=[1])
    t2 = fd.ops.neg(t1)
    fd.add_output(t2)

fd.execute([torch.randn(128, 1, 64, device="cuda")])
