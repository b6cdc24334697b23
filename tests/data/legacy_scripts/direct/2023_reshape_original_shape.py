# Hand translation of ../2023_reshape_original_shape.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType


def nvfuser_fusion_id3(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.ops.reshape(T0, new_shape=[64, 12, 64])
    T2 = fd.ops.exp(T1)
    fd.add_output(T2)


with FusionDefinition() as fd:
    nvfuser_fusion_id3(fd)

fd.execute([torch.randn(64, 768, device="cuda")])
