# 2023: broadcast_in_dim(arg, output_shape=..., broadcast_dims=...); output_shape became shape in
# 5f60a5976 (2023-08-16).
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(symbolic_sizes=[-1], contiguity=[True], dtype=DataType.Float)
    t1 = fd.define_tensor(symbolic_sizes=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t2 = fd.ops.broadcast_in_dim(t0, output_shape=[512, 256], broadcast_dims=[1])
    t3 = fd.ops.mul(t1, t2)
    fd.add_output(t3)

fd.execute([torch.randn(256, device="cuda"), torch.randn(512, 256, device="cuda")])
