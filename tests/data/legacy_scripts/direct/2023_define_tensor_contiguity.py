# Hand translation of ../2023_define_tensor_contiguity.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType


def nvfuser_fusion_id0(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half, is_cpu=False)
    T1 = fd.ops.cast(T0, dtype=DataType.Float)
    T2 = fd.ops.tanh(T1)
    T3 = fd.ops.cast(T2, dtype=DataType.Half)
    fd.add_output(T3)


with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [torch.randn(1024, 1024, dtype=torch.float16, device="cuda")]
fd.execute(inputs)
