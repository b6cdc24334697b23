# Hand translation of ../2024_sdpfa_fwd_positional.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id7(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    T2 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    S3 = fd.define_scalar(0.00000, dtype=DataType.Double)
    S4 = fd.define_scalar(True, dtype=DataType.Bool)
    T5, T6, T7, T8 = fd.ops.sdpfa_fwd(T0, T1, T2, dropout_p=S3, is_causal=S4, scale=None)
    fd.add_output(T5)
    fd.add_output(T6)

with FusionDefinition() as fd:
    nvfuser_fusion_id7(fd)

inputs = [torch.randn(2, 8, 256, 64, dtype=torch.bfloat16, device="cuda") for _ in range(3)]
fd.execute(inputs)
