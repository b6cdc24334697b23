# 2025: FusionDefinition(id=None, max_length=9999, use_multidevice_executor=False, ...)
# (nvfuser/__init__.py, 6a56066be 2025-03-12); direct's FusionDefinition() takes no arguments.
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition(max_length=2048, use_multidevice_executor=False) as fd:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    T1 = fd.ops.cumsum(T0, dim=1)
    fd.add_output(T1)

fd.execute([torch.randn(64, 1024, device="cuda")])
