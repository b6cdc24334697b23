# 2023-2025: add_alpha(a, b, alpha) computed a + b * alpha (csrc/ops/arith.cpp builds
# add(a, mul(b, alpha))); nvfuser_direct has no add_alpha.
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    S2 = fd.define_scalar(0.100000, dtype=DataType.Double)
    T3 = fd.ops.add_alpha(T0, T1, S2)
    fd.add_output(T3)

fd.execute([torch.randn(2048, 512, device="cuda"), torch.randn(2048, 512, device="cuda")])
