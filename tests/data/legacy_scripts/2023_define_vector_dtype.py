# 2023 (August on): shapes built from a Vector, printed as define_vector([...], dtype=DataType.Int)
# (VectorRecord, 071c9522b / 5f60a5976); nvfuser_direct takes plain lists of ints and scalars.
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id2(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False)
    S1 = fd.define_scalar(None, dtype=DataType.Int)
    S2 = fd.define_scalar(None, dtype=DataType.Int)
    V3 = fd.define_vector([S1, S2], dtype=DataType.Int)
    T4 = fd.ops.broadcast_in_dim(T0, shape=V3, broadcast_dims=[1])
    T5 = fd.ops.cos(T4)
    fd.add_output(T5)


with FusionDefinition() as fd:
    nvfuser_fusion_id2(fd)

fd.execute([torch.randn(384, device="cuda"), 96, 384])
