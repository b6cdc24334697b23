# 2023 (April-August): define_tensor(symbolic_sizes=..., contiguity=...), as nvFuser printed it then;
# `symbolic_sizes` became `shape` in d4aaa039b (2023-08-09).
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id0(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(symbolic_sizes=[-1, -1], contiguity=[True, True], dtype=DataType.Half, is_cpu=False)
    T1 = fd.ops.cast(T0, dtype=DataType.Float)
    T2 = fd.ops.tanh(T1)
    T3 = fd.ops.cast(T2, dtype=DataType.Half)
    fd.add_output(T3)


with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [torch.randn(1024, 1024, dtype=torch.float16, device="cuda")]
fd.execute(inputs)
