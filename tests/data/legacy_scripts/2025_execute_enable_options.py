# 2025: execute(inputs, _enable_options=..., _disable_options=..., print_repro=...) (7212038d6
# 2024-11-13); direct keeps the options and drops print_repro.
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.ops.sum(T0, dims=[1], keepdim=True, dtype=DataType.Float)
    T2 = fd.ops.div(T0, T1)
    fd.add_output(T2)

fd.execute([torch.rand(256, 8192, device="cuda")], _disable_options=["kernel_reuse"], print_repro=False)
