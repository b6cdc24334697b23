# Hand translation of ../2023_fusion_cache.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
    t1 = fd.ops.cast(t0, dtype=DataType.Float)
    t2 = fd.ops.silu(t1)
    t3 = fd.ops.cast(t2, dtype=DataType.BFloat16)
    fd.add_output(t3)

fd.execute([torch.randn(2048, 1024, dtype=torch.bfloat16, device="cuda")])
