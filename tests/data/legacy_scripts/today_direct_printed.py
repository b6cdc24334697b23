# CUDA devices:
#  0: NVIDIA H200
# torch version: 2.11.0+cu130
# cuda version: 13.0
# Today (nvFuser 0.2.36): a repro as nvfuser_direct prints it (fd.repro_script_for); it runs as it is.
import torch
from nvfuser_direct import FusionDefinition, DataType
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv1 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv2 = fd.ops.sum(tv1, dims=[1], keepdim=False, dtype=DataType.Null)
    tv3 = fd.ops.broadcast_in_dim(tv2, shape=[tv0.size(0), 1], broadcast_dims=[0])
    tv4 = fd.ops.sub(tv1, tv3)
    tv5 = fd.ops.cast(tv4, dtype=DataType.BFloat16)
    fd.add_output(tv5)
with FusionDefinition() as fd:
    nvfuser_fusion(fd)

inputs = [
    torch.testing.make_tensor((1024, 4096), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
