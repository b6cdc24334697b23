# 2023-2025: FusionDefinition.fusion_ir() printed the unscheduled fusion (602718d75 2023-04-06);
# direct prints its math with fd.fusion.print_math().
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t2 = fd.ops.where(fd.ops.gt(t0, t1), t0, t1)
    fd.add_output(t2)

print(fd.fusion_ir())
fd.execute([torch.randn(640, 480, device="cuda"), torch.randn(640, 480, device="cuda")])
