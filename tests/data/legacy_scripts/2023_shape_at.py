# 2023 (August on): shape(t) returned a Vector and at(vector, i) one of its elements (225793e1d
# 2023-08-01); direct's shape is a plain list, indexed with [i].
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
    V2 = fd.ops.shape(T0)
    S3 = fd.ops.at(V2, 0)
    S4 = fd.ops.at(V2, -1)
    T5 = fd.ops.broadcast_in_dim(T1, shape=[S3, S4], broadcast_dims=[0])
    T6 = fd.ops.mul(T0, T5)
    fd.add_output(T6)

fd.execute([torch.randn(100, 1000, device="cuda"), torch.randn(100, device="cuda")])
