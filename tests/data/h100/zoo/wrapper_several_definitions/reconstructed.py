# CUDA devices:
#  0: NVIDIA H100 80GB HBM3
# torch version: 2.11.0+cu130
# cuda version: 13.0
import torch
from nvfuser_direct import FusionDefinition, DataType
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[1024, 4096], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0, 1])
    tv1 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv2 = fd.ops.mul(tv1, tv1)
    tv3 = fd.ops.sum(tv2, dims=[1], dtype=DataType.Float)
    fd.add_output(tv3)
with FusionDefinition() as fd:
    nvfuser_fusion(fd)

inputs = [
    torch.randn(4194304, dtype=torch.bfloat16, device='cuda:0').as_strided((1024, 4096), (1, 1024)),
]
fd.execute(inputs)
