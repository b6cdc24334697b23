# CUDA devices:
#  0: NVIDIA H100 80GB HBM3
# torch version: 2.11.0+cu130
# cuda version: 13.0
import torch
from nvfuser_direct import FusionDefinition, DataType
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[1024, 4096], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    tv1 = fd.ops.mul(tv0, 0.123457)
    tv2 = fd.ops.sum(tv1, dims=[1], dtype=DataType.Float)
    fd.add_output(tv2)
with FusionDefinition() as fd:
    nvfuser_fusion(fd)

inputs = [
    torch.testing.make_tensor((1024, 4096), dtype=torch.float32, device='cuda:0'),
]
fd.execute(inputs)
