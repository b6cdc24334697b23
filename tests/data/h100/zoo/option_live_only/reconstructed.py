# CUDA devices:
#  0: NVIDIA H100 80GB HBM3
# torch version: 2.11.0+cu130
# cuda version: 13.0
import torch
from nvfuser_direct import FusionDefinition, DataType
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[4, 1024, 4096], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv1 = fd.define_tensor(shape=[4096], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv6 = fd.ops.mul(tv2, tv2)
    tv7 = fd.ops.sum(tv6, dims=[2], dtype=DataType.Float)
    tv8 = fd.ops.broadcast(tv7, is_broadcast_dim=[False, False, True])
    tv9 = fd.ops.cast(tv8, dtype=DataType.Float)
    c44 = fd.ops.reciprocal(4096.00)
    tv10 = fd.ops.mul(tv9, c44)
    tv11 = fd.ops.add(tv10, 1.00000e-05)
    tv12 = fd.ops.rsqrt(tv11)
    tv13 = fd.ops.expand(tv12, shape=[4, 1024, 4096])
    tv14 = fd.ops.mul(tv2, tv13)
    tv3 = fd.ops.cast(tv1, dtype=DataType.Float)
    tv4 = fd.ops.broadcast(tv3, is_broadcast_dim=[True, True, False])
    tv5 = fd.ops.expand(tv4, shape=[4, 1024, 4096])
    tv15 = fd.ops.mul(tv14, tv5)
    tv16 = fd.ops.cast(tv15, dtype=DataType.BFloat16)
    fd.add_output(tv12)
    fd.add_output(tv16)
with FusionDefinition() as fd:
    nvfuser_fusion(fd)

inputs = [
    torch.testing.make_tensor((4, 1024, 4096), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((4096,), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
