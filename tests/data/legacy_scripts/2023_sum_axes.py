# 2023: reductions took axes= (and axis= for one dimension) until 7d7735c5d (2024-02-08) renamed
# them dims= and dim=; this is how nvFuser printed a sum in 2023.
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id0(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.ops.sum(T0, axes=[1], keepdim=False, dtype=DataType.Null)
    fd.add_output(T1)


with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

fd.execute([torch.randn(512, 1024, device="cuda")])
