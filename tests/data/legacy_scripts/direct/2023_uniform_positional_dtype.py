# Hand translation of ../2023_uniform_positional_dtype.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    lo = fd.define_scalar(0.0)
    hi = fd.define_scalar(1.0)
    rows = fd.define_scalar(512)
    cols = fd.define_scalar(512)
    r = fd.ops.uniform(lo, hi, [rows, cols], dtype=DataType.Float)
    t1 = fd.ops.mul(t0, r)
    fd.add_output(t1)

fd.execute([torch.randn(512, 512, device="cuda")])
