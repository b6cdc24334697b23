# Hand translation of ../2025_execute_enable_options.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.ops.sum(T0, dims=[1], keepdim=True, dtype=DataType.Float)
    T2 = fd.ops.div(T0, T1)
    fd.add_output(T2)

fd.execute([torch.rand(256, 8192, device="cuda")], _disable_options=["kernel_reuse"])
