# refused: compute_contiguity (line 9)
# 2023-2025: nvfuser.compute_contiguity(sizes, strides) (python_bindings.cpp from 831821f3a);
# direct has compute_tensor_descriptor, which also returns the stride order.
import torch
from nvfuser import FusionDefinition, DataType, compute_contiguity

x = torch.randn(64, 32, device="cuda").t()
with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=compute_contiguity(x.size(), x.stride()), dtype=DataType.Float)
    fd.add_output(fd.ops.relu(t0))
fd.execute([x])
