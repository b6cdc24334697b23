# 2024: a dynamic reshape through a Vector (define_vector, 071c9522b 2023-07-11; reshape with a
# Vector, 9ccce29ab 2023-10-12).
import torch
from nvfuser import FusionDefinition, DataType

def nvfuser_fusion_id5(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float, is_cpu=False)
    S1 = fd.define_scalar(None, dtype=DataType.Int)
    S2 = fd.define_scalar(None, dtype=DataType.Int)
    V3 = fd.define_vector([S1, S2], dtype=DataType.Int)
    T4 = fd.ops.reshape(T0, new_shape=V3)
    T5 = fd.ops.erf(T4)
    fd.add_output(T5)

with FusionDefinition() as fd:
    nvfuser_fusion_id5(fd)

fd.execute([torch.randn(8, 64, 96, device="cuda"), 512, 96])
