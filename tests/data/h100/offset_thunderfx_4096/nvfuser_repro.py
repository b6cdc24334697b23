# CUDA devices:
#  0: NVIDIA H100 80GB HBM3
# torch version: 2.11.0+cu130
# cuda version: 13.0
import torch
from nvfuser_direct import FusionDefinition, DataType
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[4096, 4096], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv1 = fd.define_tensor(shape=[4096], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.define_tensor(shape=[4096], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv3 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv10, tv11, tv12 = fd.ops.welford(tv3, dims=[1])
    tv16 = fd.ops.broadcast(tv10, is_broadcast_dim=[False, True])
    tv17 = fd.ops.cast(tv16, dtype=DataType.Float)
    tv19 = fd.ops.expand(tv17, shape=[4096, 4096])
    tv21 = fd.ops.sub(tv3, tv19)
    c30 = fd.ops.cast(4096, dtype=DataType.Double)
    c32 = fd.ops.mul(1.00000, c30)
    c36 = fd.ops.cast(0, dtype=DataType.Double)
    c38 = fd.ops.sub(c32, c36)
    c40 = fd.ops.cast(0, dtype=DataType.Double)
    c42 = fd.ops.ge(c38, c40)
    c44 = fd.ops.cast(0, dtype=DataType.Double)
    c46 = fd.ops.where(c42, c38, c44)
    c51 = fd.ops.reciprocal(c46)
    tv13 = fd.ops.mul(tv11, c51)
    tv14 = fd.ops.broadcast(tv13, is_broadcast_dim=[False, True])
    tv15 = fd.ops.cast(tv14, dtype=DataType.Float)
    tv18 = fd.ops.add(tv15, 1.00000e-05)
    tv20 = fd.ops.rsqrt(tv18)
    tv22 = fd.ops.expand(tv20, shape=[4096, 4096])
    tv23 = fd.ops.mul(tv21, tv22)
    tv4 = fd.ops.broadcast(tv1, is_broadcast_dim=[True, False])
    tv5 = fd.ops.expand(tv4, shape=[4096, 4096])
    tv6 = fd.ops.cast(tv5, dtype=DataType.Float)
    tv24 = fd.ops.mul(tv23, tv6)
    tv7 = fd.ops.broadcast(tv2, is_broadcast_dim=[True, False])
    tv8 = fd.ops.expand(tv7, shape=[4096, 4096])
    tv9 = fd.ops.cast(tv8, dtype=DataType.Float)
    tv25 = fd.ops.add(tv24, tv9)
    tv26 = fd.ops.cast(tv25, dtype=DataType.BFloat16)
    c105 = fd.ops.reciprocal(1.41421)
    tv27 = fd.ops.mul(tv25, c105)
    tv28 = fd.ops.erf(tv27)
    tv29 = fd.ops.mul(0.500000, tv28)
    tv30 = fd.ops.add(0.500000, tv29)
    tv31 = fd.ops.mul(tv25, tv30)
    tv32 = fd.ops.cast(tv31, dtype=DataType.BFloat16)
    fd.add_output(tv23)
    fd.add_output(tv26)
    fd.add_output(tv32)
with FusionDefinition() as fd:
    nvfuser_fusion(fd)

inputs = [
    torch.testing.make_tensor((4096, 4096), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((4096,), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((4096,), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
