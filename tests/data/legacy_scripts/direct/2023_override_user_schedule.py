# Hand translation of ../2023_override_user_schedule.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t1 = fd.ops.sqrt(fd.ops.abs(t0))
    fd.add_output(t1)

out = fd.execute([torch.randn(4096, 256, device="cuda")], device="cuda:0")
print(out[0].shape)
