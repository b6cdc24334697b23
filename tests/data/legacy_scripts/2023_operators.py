# 2023-2025: legacy Tensor and Scalar values had Python operators (BINARY_OP_SPECIAL and
# UNARY_OP_SPECIAL in python_bindings.cpp, 831821f3a on; `/` called div); direct values have none.
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    s0 = fd.define_scalar(2.0, dtype=DataType.Double)
    t2 = (t0 + t1) * s0
    t3 = -t2 / s0
    t4 = abs(t3 - t0)
    fd.add_output(t4)

inputs = [torch.randn(1024, 512, device="cuda"), torch.randn(1024, 512, device="cuda")]
fd.execute(inputs)
