# refused: fd.last_cuda_code() (line 11) | fd.profile() (line 12)
# 2023-2025: fd.last_cuda_code() (602718d75 2023-04-06) and fd.profile() (167f8bdc1 2024-06-05);
# direct keeps neither.
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
    fd.add_output(fd.ops.cos(t0))
fd.execute([torch.randn(64, device="cuda")], profile=True)
print(fd.last_cuda_code(intrinsic_code=True))
print(fd.profile().kernel_profiles)
