# 2024-2025: nvfuser.enable_/disable_automatic_serialization() (afef1d139 2023-12-06) saved the
# legacy FusionCache to disk at exit; direct has no such cache.
import torch
import nvfuser
from nvfuser import FusionDefinition, DataType

nvfuser.disable_automatic_serialization()

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
    t1 = fd.ops.sin(t0)
    fd.add_output(t1)

fd.execute([torch.randn(1 << 22, device="cuda")])
