import torch
from nvfuser_direct import FusionDefinition, DataType

def define_scale(fd):
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[False, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.ops.cast(T0, dtype=DataType.Float)
    T2 = fd.ops.mul(T1, T1)
    fd.add_output(fd.ops.cast(T2, dtype=DataType.BFloat16))

with FusionDefinition() as fd:
    define_scale(fd)
inputs = [torch.testing.make_tensor((4096, 4096), dtype=torch.bfloat16, device="cuda:0")]
fd.execute(inputs)
