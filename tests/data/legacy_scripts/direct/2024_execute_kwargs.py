# Hand translation of ../2024_execute_kwargs.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half)
    t1 = fd.ops.cast(t0, dtype=DataType.Float)
    t2 = fd.ops.sum(t1, dims=[0], keepdim=False, dtype=DataType.Float)
    fd.add_output(t2)

inputs = [torch.randn(8192, 1024, dtype=torch.float16, device="cuda")]
outputs = fd.execute(inputs, save_repro_inputs=True)
