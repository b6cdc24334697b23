# 2023: full(size=..., arg=..., dtype=...) until e5ef1a229 (2023-08-09, full(shape, fill_value, dtype)).
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(symbolic_sizes=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    c0 = fd.define_scalar(2.0, dtype=DataType.Double)
    t1 = fd.ops.full(size=[256, 128], arg=c0, dtype=DataType.Float)
    t2 = fd.ops.add(t0, t1)
    fd.add_output(t2)

fd.execute([torch.randn(256, 128, device="cuda")])
