# refused: fd.id() (line 12) | FusionDefinition(fd.id()) (line 12)
# 2023-2025: FusionDefinition(id) looked a defined fusion up in the FusionCache (test_basic at
# 831821f3a); direct has no cache of definitions.
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
    fd.add_output(fd.ops.exp(t0))
fd.execute([torch.randn(8, device="cuda")])

again = FusionDefinition(fd.id())
again.execute([torch.randn(8, device="cuda")])
