# 2023-2025: nvFuser printed an output's layout as add_output(T, stride_order=[...]) (OutputRecord,
# b9d260a59 2023-10-20 on); direct orders an output with the stride_order op.
import torch
from nvfuser import FusionDefinition, DataType

def nvfuser_fusion_id4(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.ops.permute(T0, dims=[0, 2, 1])
    T2 = fd.ops.relu(T1)
    fd.add_output(T2, stride_order=[2, 0, 1])

with FusionDefinition() as fd:
    nvfuser_fusion_id4(fd)

fd.execute([torch.randn(16, 128, 256, device="cuda")])
