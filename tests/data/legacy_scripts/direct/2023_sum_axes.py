# Hand translation of ../2023_sum_axes.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType


def nvfuser_fusion_id0(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.ops.sum(T0, dims=[1], keepdim=False, dtype=DataType.Null)
    fd.add_output(T1)


with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

fd.execute([torch.randn(512, 1024, device="cuda")])
