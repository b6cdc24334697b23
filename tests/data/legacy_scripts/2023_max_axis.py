# 2023: the one-dimension overload of a reduction took axis= until 7d7735c5d (2024-02-08, dim=).
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t1 = fd.ops.max(t0, axis=0, keepdim=True, dtype=DataType.Null)
    t2 = fd.ops.sub(t0, t1)
    fd.add_output(t2)

fd.execute([torch.randn(1024, 256, device="cuda")])
