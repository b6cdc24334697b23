# 2023-2025: scripts imported FusionCache to reset or inspect the process-wide cache of fusions
# (python_bindings.cpp from 831821f3a); nvfuser_direct has none: each FusionDefinition compiles.
import torch
from nvfuser import FusionCache, FusionDefinition, DataType

FusionCache.reset()
fc = FusionCache.get()

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
    t1 = fd.ops.cast(t0, dtype=DataType.Float)
    t2 = fd.ops.silu(t1)
    t3 = fd.ops.cast(t2, dtype=DataType.BFloat16)
    fd.add_output(t3)

fd.execute([torch.randn(2048, 1024, dtype=torch.bfloat16, device="cuda")])
