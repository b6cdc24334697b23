# Hand translation of ../2023_define_tensor_symbolic_sizes.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t1 = fd.define_tensor(shape=[1, -1], contiguity=[None, True], dtype=DataType.Float)
    t2 = fd.ops.add(t0, t1)
    t3 = fd.ops.relu(t2)
    fd.add_output(t3)

inputs = [torch.randn(256, 512, device="cuda"), torch.randn(1, 512, device="cuda")]
fd.execute(inputs)
