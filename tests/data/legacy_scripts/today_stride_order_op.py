# Today (nvFuser 0.2.36): an output laid out with the stride_order op and a define_vector input.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=True, dtype=DataType.Float)
    v = fd.define_vector(2)
    t1 = fd.ops.reshape(t0, v)
    t2 = fd.ops.mul(t1, t1)
    fd.add_output(fd.ops.stride_order(t2, [0, 1]))

fd.execute([torch.randn(128, 64, device="cuda"), 64, 128])
