# Hand translation of ../2023_var_mean_axes.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float)
    var, mean = fd.ops.var_mean(t0, dims=[2], correction=0, keepdim=False)
    fd.add_output(var)
    fd.add_output(mean)

fd.execute([torch.randn(8, 512, 768, device="cuda")])
