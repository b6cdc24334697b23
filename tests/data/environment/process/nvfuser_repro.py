# CUDA devices:
#  0: NVIDIA H200
# torch version: 2.11.0+cu130
# cuda version: 13.0
import torch
from nvfuser_direct import FusionDefinition, DataType
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[32768, 8192], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv1 = fd.define_tensor(shape=[8192], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.define_tensor(shape=[8192], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv3 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv4, tv5, tv6 = fd.ops.welford(tv3, dims=[1])
    tv10 = fd.ops.broadcast(tv4, is_broadcast_dim=[False, True])
    tv11 = fd.ops.cast(tv10, dtype=DataType.Float)
    tv14 = fd.ops.expand(tv11, shape=[32768, 8192])
    tv15 = fd.ops.sub(tv3, tv14)
    c15 = fd.ops.cast(8192, dtype=DataType.Double)
    c17 = fd.ops.mul(1.00000, c15)
    c21 = fd.ops.cast(0, dtype=DataType.Double)
    c23 = fd.ops.sub(c17, c21)
    c25 = fd.ops.cast(0, dtype=DataType.Double)
    c27 = fd.ops.ge(c23, c25)
    c29 = fd.ops.cast(0, dtype=DataType.Double)
    c31 = fd.ops.where(c27, c23, c29)
    c37 = fd.ops.reciprocal(c31)
    tv7 = fd.ops.mul(tv5, c37)
    tv8 = fd.ops.broadcast(tv7, is_broadcast_dim=[False, True])
    tv9 = fd.ops.cast(tv8, dtype=DataType.Float)
    tv12 = fd.ops.add(tv9, 1.00000e-05)
    tv13 = fd.ops.rsqrt(tv12)
    tv16 = fd.ops.expand(tv13, shape=[32768, 8192])
    tv17 = fd.ops.mul(tv15, tv16)
    tv18 = fd.ops.broadcast(tv1, is_broadcast_dim=[True, False])
    tv19 = fd.ops.expand(tv18, shape=[32768, 8192])
    tv20 = fd.ops.cast(tv19, dtype=DataType.Float)
    tv21 = fd.ops.mul(tv17, tv20)
    tv22 = fd.ops.broadcast(tv2, is_broadcast_dim=[True, False])
    tv23 = fd.ops.expand(tv22, shape=[32768, 8192])
    tv24 = fd.ops.cast(tv23, dtype=DataType.Float)
    tv25 = fd.ops.add(tv21, tv24)
    tv26 = fd.ops.neg(tv25)
    tv27 = fd.ops.exp(tv26)
    tv28 = fd.ops.add(1.00000, tv27)
    tv29 = fd.ops.reciprocal(tv28)
    tv30 = fd.ops.mul(tv25, tv29)
    tv31 = fd.ops.cast(tv30, dtype=DataType.BFloat16)
    fd.add_output(tv31)
with FusionDefinition() as fd:
    nvfuser_fusion(fd)

inputs = [
    torch.testing.make_tensor((32768, 8192), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((8192,), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((8192,), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
