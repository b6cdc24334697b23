# 2023: uniform/normal(a, b, shape, dtype) took dtype as the 4th positional argument until
# e30b6bbc3 (2023-11-15) made it keyword-only after rng_seed and rng_offset.
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(symbolic_sizes=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    lo = fd.define_constant(0.0)
    hi = fd.define_constant(1.0)
    rows = fd.define_constant(512)
    cols = fd.define_constant(512)
    r = fd.ops.uniform(lo, hi, [rows, cols], DataType.Float)
    t1 = fd.ops.mul(t0, r)
    fd.add_output(t1)

fd.execute([torch.randn(512, 512, device="cuda")])
