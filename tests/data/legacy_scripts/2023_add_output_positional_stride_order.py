# 2023-2025: add_output(output, stride_order) was an overload (python_bindings.cpp from 831821f3a),
# so a stride order could be passed positionally; direct's add_output(output, alias_input) would take
# it for an alias, and direct orders an output with the stride_order op.
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float)
    t1 = fd.ops.log1p(t0)
    fd.add_output(t1, (2, 1, 0))
    fd.add_output(t0, [0, 2, 1])

fd.execute([torch.rand(32, 64, 128, device="cuda")])
