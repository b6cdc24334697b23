# Hand translation of ../2023_full_printed.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType


def nvfuser_fusion_id1(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    S1 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T2 = fd.ops.full(fill_value=S1, shape=[64, 64], dtype=DataType.Float)
    T3 = fd.ops.sub(T0, T2)
    fd.add_output(T3)


with FusionDefinition() as fd:
    nvfuser_fusion_id1(fd)

fd.execute([torch.randn(64, 64, device="cuda")])
