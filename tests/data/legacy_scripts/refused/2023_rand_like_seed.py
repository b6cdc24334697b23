# refused: fd.ops.rand_like(t0, rng_seed=seed, rng_offset=offset) (line 11)
# 2023-2025: rand_like(t, rng_seed=..., rng_offset=...) (c2a3a32b5 2023-07-10); direct's rand_like
# takes the tensor only.
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
    seed = fd.define_scalar(None, dtype=DataType.Int)
    offset = fd.define_scalar(None, dtype=DataType.Int)
    t1 = fd.ops.rand_like(t0, rng_seed=seed, rng_offset=offset)
    fd.add_output(t1)
fd.execute([torch.randn(1024, device="cuda"), 0, 0])
