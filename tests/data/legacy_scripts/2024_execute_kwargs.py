# 2024: execute(inputs, print_repro=..., profile=...) (7f0bd0d0f 2024-10-08, 167f8bdc1 2024-06-05)
# and capture_debug_output= (72222467b 2023-08-18); direct's execute has none of them.
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half)
    t1 = fd.ops.cast(t0, dtype=DataType.Float)
    t2 = fd.ops.sum(t1, dims=[0], keepdim=False, dtype=DataType.Float)
    fd.add_output(t2)

inputs = [torch.randn(8192, 1024, dtype=torch.float16, device="cuda")]
outputs = fd.execute(inputs, print_repro=False, profile=False, capture_debug_output=False, save_repro_inputs=True)
