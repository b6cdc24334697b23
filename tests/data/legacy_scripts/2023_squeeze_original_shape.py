# 2023: squeeze(arg, original_shape, dims) until 61b0ab626 (2024-01-09, squeeze(arg, dims)).
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(symbolic_sizes=[-1, 1, -1], contiguity=[True, None, True], dtype=DataType.Float)
    t1 = fd.ops.squeeze(t0, original_shape=[128, 1, 64], dims=[1])
    t2 = fd.ops.neg(t1)
    fd.add_output(t2)

fd.execute([torch.randn(128, 1, 64, device="cuda")])
