# CUDA devices:
#  0: NVIDIA A100-SXM4-80GB
# torch version: 2.4.0a0
# cuda version: 12.4
# nvfuser version: 0.2.10+git0a1b2c3
# 2024: a definition as nvFuser printed it in 2024 (dims=, shape=, stride_order=, define_scalar);
# only the import changes.
import torch
from nvfuser import FusionDefinition, DataType

def nvfuser_fusion_id1(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.cast(T1, dtype=DataType.Float)
    T4 = fd.ops.mul(T2, T2)
    T5 = fd.ops.sum(T4, dims=[1], keepdim=False, dtype=DataType.Null)
    T6 = fd.ops.broadcast_in_dim(T5, shape=[T0.size(0), 1], broadcast_dims=[0])
    S7 = fd.define_scalar(2048.00, dtype=DataType.Double)
    S8 = fd.ops.reciprocal(S7)
    T9 = fd.ops.mul(T6, S8)
    S10 = fd.define_scalar(1.00000e-06, dtype=DataType.Double)
    T11 = fd.ops.add(T9, S10)
    T12 = fd.ops.rsqrt(T11)
    T13 = fd.ops.broadcast_in_dim(T12, shape=[T0.size(0), T0.size(1)], broadcast_dims=[0, 1])
    T14 = fd.ops.mul(T2, T13)
    T15 = fd.ops.broadcast_in_dim(T3, shape=[T0.size(0), T0.size(1)], broadcast_dims=[1])
    T16 = fd.ops.mul(T14, T15)
    T17 = fd.ops.cast(T16, dtype=DataType.BFloat16)
    fd.add_output(T17)

with FusionDefinition() as fd:
    nvfuser_fusion_id1(fd)

inputs = [
    torch.randn((8192, 2048), dtype=torch.bfloat16, device='cuda:0').as_strided((8192, 2048), (2048, 1)),
    torch.randn((2048,), dtype=torch.bfloat16, device='cuda:0').as_strided((2048,), (1,)),
]
fd.execute(inputs)
