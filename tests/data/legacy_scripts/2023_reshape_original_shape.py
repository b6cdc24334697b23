# 2023: reshape(arg, original_shape, new_shape) until 9ccce29ab (2023-10-12, reshape(arg, new_shape)).
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id3(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(symbolic_sizes=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.ops.reshape(T0, original_shape=[64, 768], new_shape=[64, 12, 64])
    T2 = fd.ops.exp(T1)
    fd.add_output(T2)


with FusionDefinition() as fd:
    nvfuser_fusion_id3(fd)

fd.execute([torch.randn(64, 768, device="cuda")])
