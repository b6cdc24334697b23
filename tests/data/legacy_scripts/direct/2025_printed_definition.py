# CUDA devices:
#  0: NVIDIA H100 80GB HBM3
# torch version: 2.7.0a0+gitabcdef0
# cuda version: 12.8
# nvfuser version: 0.2.27+git1234567
# Hand translation of ../2025_printed_definition.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[2, 2048, 4096], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[4096], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T2 = fd.define_tensor(shape=[4096], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T3 = fd.ops.cast(T0, dtype=DataType.Float)
    T4, T5 = fd.ops.var_mean(T3, dims=[2], correction=0, keepdim=False)
    T6 = fd.ops.broadcast_in_dim(T4, shape=[2, 2048, 1], broadcast_dims=[0, 1])
    T7 = fd.ops.broadcast_in_dim(T5, shape=[2, 2048, 1], broadcast_dims=[0, 1])
    S8 = fd.define_scalar(1.00000e-05, dtype=DataType.Double)
    T9 = fd.ops.add(T6, S8)
    T10 = fd.ops.rsqrt(T9)
    T11 = fd.ops.broadcast_in_dim(T7, shape=[2, 2048, 4096], broadcast_dims=[0, 1, 2])
    T12 = fd.ops.sub(T3, T11)
    T13 = fd.ops.broadcast_in_dim(T10, shape=[2, 2048, 4096], broadcast_dims=[0, 1, 2])
    T14 = fd.ops.mul(T12, T13)
    T15 = fd.ops.broadcast_in_dim(T1, shape=[2, 2048, 4096], broadcast_dims=[2])
    T16 = fd.ops.cast(T15, dtype=DataType.Float)
    T17 = fd.ops.mul(T14, T16)
    T18 = fd.ops.broadcast_in_dim(T2, shape=[2, 2048, 4096], broadcast_dims=[2])
    T19 = fd.ops.cast(T18, dtype=DataType.Float)
    T20 = fd.ops.add(T17, T19)
    T21 = fd.ops.cast(T20, dtype=DataType.BFloat16)
    fd.add_output(T21)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.testing.make_tensor((2, 2048, 4096), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((4096,), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((4096,), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
