# Hand translation of ../2023_add_output_positional_stride_order.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float)
    t1 = fd.ops.log1p(t0)
    fd.add_output(fd.ops.stride_order(t1, (2, 1, 0)))
    fd.add_output(fd.ops.stride_order(t0, [0, 2, 1]))

fd.execute([torch.rand(32, 64, 128, device="cuda")])
