# Hand translation of ../2023_broadcast_in_dim_output_shape.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
    t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t2 = fd.ops.broadcast_in_dim(t0, shape=[512, 256], broadcast_dims=[1])
    t3 = fd.ops.mul(t1, t2)
    fd.add_output(t3)

fd.execute([torch.randn(256, device="cuda"), torch.randn(512, 256, device="cuda")])
