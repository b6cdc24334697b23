# 2023 (March-April): define_tensor(symbolic_sizes=..., contiguous=...); `contiguous` became
# `contiguity` in 59a124e43 (2023-04-20), `symbolic_sizes` became `shape` in d4aaa039b (2023-08-09).
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(symbolic_sizes=[-1, -1], contiguous=[True, True], dtype=DataType.Float)
    t1 = fd.define_tensor(symbolic_sizes=[1, -1], contiguous=[None, True], dtype=DataType.Float)
    t2 = fd.ops.add(t0, t1)
    t3 = fd.ops.relu(t2)
    fd.add_output(t3)

inputs = [torch.randn(256, 512, device="cuda"), torch.randn(1, 512, device="cuda")]
fd.execute(inputs)
