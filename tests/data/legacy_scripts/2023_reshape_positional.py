# 2023: the same old reshape written by hand, all three arguments positional.
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float)
    t1 = fd.ops.reshape(t0, [4, 256, 32], [4, 8192])
    t2 = fd.ops.sigmoid(t1)
    fd.add_output(t2)

fd.execute([torch.randn(4, 256, 32, device="cuda")])
