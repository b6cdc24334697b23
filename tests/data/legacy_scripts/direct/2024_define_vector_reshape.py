# Hand translation of ../2024_define_vector_reshape.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id5(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float, is_cpu=False)
    S1 = fd.define_scalar(None, dtype=DataType.Int)
    S2 = fd.define_scalar(None, dtype=DataType.Int)
    V3 = [S1, S2]
    T4 = fd.ops.reshape(T0, new_shape=V3)
    T5 = fd.ops.erf(T4)
    fd.add_output(T5)

with FusionDefinition() as fd:
    nvfuser_fusion_id5(fd)

fd.execute([torch.randn(8, 64, 96, device="cuda"), 512, 96])
