# 2023: var_mean(arg, axes, correction, keepdim) until 7d7735c5d (2024-02-08, dims=).
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float)
    var, mean = fd.ops.var_mean(t0, axes=[2], correction=0, keepdim=False)
    fd.add_output(var)
    fd.add_output(mean)

fd.execute([torch.randn(8, 512, 768, device="cuda")])
