"""The seed RMSNorm fusion with its activation input at storage offset 1 (2-byte aligned)."""

import torch
from nvfuser_direct import DataType, FusionDefinition

with FusionDefinition() as fd:
    T0 = fd.define_tensor(shape=[4, 1024, 4096], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[4096], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.cast(T1, dtype=DataType.Float)
    T8 = fd.ops.broadcast_in_dim(T3, shape=[4, 1024, 4096], broadcast_dims=[2])
    T9 = fd.ops.mul(T2, T2)
    T10 = fd.ops.sum(T9, dims=[2], keepdim=False, dtype=DataType.Null)
    T15 = fd.ops.broadcast_in_dim(T10, shape=[4, 1024, 1], broadcast_dims=[0, 1])
    S16 = fd.define_scalar(4096.00, dtype=DataType.Double)
    S17 = fd.ops.reciprocal(S16)
    T18 = fd.ops.mul(T15, S17)
    S19 = fd.define_scalar(1.00000e-05, dtype=DataType.Double)
    T20 = fd.ops.add(T18, S19)
    T21 = fd.ops.rsqrt(T20)
    T26 = fd.ops.broadcast_in_dim(T21, shape=[4, 1024, 4096], broadcast_dims=[0, 1, 2])
    T27 = fd.ops.mul(T2, T26)
    T28 = fd.ops.mul(T27, T8)
    T29 = fd.ops.cast(T28, dtype=DataType.BFloat16)
    fd.add_output(T21)
    fd.add_output(T29)

x = torch.randn(4 * 1024 * 4096 + 1, dtype=torch.bfloat16, device="cuda")[1:].view(4, 1024, 4096)
w = torch.randn(4096, dtype=torch.bfloat16, device="cuda")
fd.execute([x, w])
