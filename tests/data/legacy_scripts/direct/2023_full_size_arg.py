# Hand translation of ../2023_full_size_arg.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    c0 = fd.define_scalar(2.0, dtype=DataType.Double)
    t1 = fd.ops.full(shape=[256, 128], fill_value=c0, dtype=DataType.Float)
    t2 = fd.ops.add(t0, t1)
    fd.add_output(t2)

fd.execute([torch.randn(256, 128, device="cuda")])
