# 2023 (March-May): constants came from define_constant(val=...); define_scalar defines constants
# too since 441d27d30 (2023-05-30), and define_constant stayed a deprecated alias until 2026.
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.from_pytorch(torch.empty(128, 256, device="cuda"))
    c0 = fd.define_constant(3.0)
    c1 = fd.define_constant(val=0.5, dtype=DataType.Double)
    t1 = fd.ops.mul(t0, c0)
    t2 = fd.ops.add(t1, c1)
    fd.add_output(t2)

fd.execute([torch.randn(128, 256, device="cuda")])
