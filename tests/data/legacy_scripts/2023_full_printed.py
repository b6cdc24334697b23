# 2023 (March-August): nvFuser printed full as full(S, shape=[..], dtype=..) (FullOpRecord::print at
# 831821f3a), a form its own binding rejected until e5ef1a229 (2023-08-09) fixed the printer; repro
# scripts of that time carry it.
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id1(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(symbolic_sizes=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    S1 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T2 = fd.ops.full(S1, shape=[64, 64], dtype=DataType.Float)
    T3 = fd.ops.sub(T0, T2)
    fd.add_output(T3)


with FusionDefinition() as fd:
    nvfuser_fusion_id1(fd)

fd.execute([torch.randn(64, 64, device="cuda")])
