# 2023-2025: tensor_sizes(t) listed a tensor's extents (TensorSizesRecord called shape(t)); direct's
# shape(t) returns the same list.
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
    sizes = fd.ops.tensor_sizes(T0)
    T2 = fd.ops.broadcast_in_dim(T1, shape=sizes, broadcast_dims=[1])
    T3 = fd.ops.div(T0, T2)
    fd.add_output(T3)

fd.execute([torch.randn(300, 200, device="cuda"), torch.rand(200, device="cuda") + 1])
