import torch
from nvfuser_direct import FusionDefinition, DataType

def define_embedding(fd):
    T0 = fd.define_tensor(shape=[4, 1024], contiguity=[True, True], dtype=DataType.Int, is_cpu=False)
    T1 = fd.define_tensor(shape=[128256, 4096], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T2 = fd.ops.reshape(T0, new_shape=[4096])
    T3 = fd.ops.broadcast(T2, is_broadcast_dim=[False, True])
    T4 = fd.ops.index_select(T1, T3, dim=0)
    T5 = fd.ops.cast(T4, dtype=DataType.Float)
    fd.add_output(fd.ops.cast(fd.ops.mul(T5, T5), dtype=DataType.BFloat16))

with FusionDefinition() as fd:
    define_embedding(fd)
inputs = [
    torch.randint(0, 128256, (4, 1024), device="cuda:0"),
    torch.randn(128256, 4096, dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
