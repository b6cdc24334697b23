# 2023: execute(inputs, override_user_schedule=...) (nvfuser/__init__.py from 831821f3a), later with
# device= (691525822, 2023-05-25) and capture_debug_output= (72222467b, 2023-08-18); direct's
# execute keeps device= only.
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t1 = fd.ops.sqrt(fd.ops.abs(t0))
    fd.add_output(t1)

out = fd.execute([torch.randn(4096, 256, device="cuda")], override_user_schedule=False, device="cuda:0", capture_debug_output=False)
print(out[0].shape)
