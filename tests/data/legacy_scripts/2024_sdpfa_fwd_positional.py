# 2024-2025: nvFuser printed sdpfa_fwd with six positional arguments (query, key, value, dropout_p,
# is_causal, scale; ef611eaf3 2024-08-06); bias and mask came before dropout_p in 1db87d170
# (2026-01-05), as in nvfuser_direct, so the scalars must be passed by keyword.
import torch
from nvfuser import FusionDefinition, DataType

def nvfuser_fusion_id7(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    T2 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    S3 = fd.define_scalar(0.00000, dtype=DataType.Double)
    S4 = fd.define_scalar(True, dtype=DataType.Bool)
    T5, T6, T7, T8 = fd.ops.sdpfa_fwd(T0, T1, T2, S3, S4, None)
    fd.add_output(T5)
    fd.add_output(T6)

with FusionDefinition() as fd:
    nvfuser_fusion_id7(fd)

inputs = [torch.randn(2, 8, 256, 64, dtype=torch.bfloat16, device="cuda") for _ in range(3)]
fd.execute(inputs)
