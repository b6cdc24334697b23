# refused: fd.ops.batch_norm (line 12)
# 2023-2025: fd.ops.batch_norm (python_bindings.cpp from 831821f3a); direct has no batch_norm.
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    x = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.Float)
    w = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
    b = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
    momentum = fd.define_scalar(0.1, dtype=DataType.Double)
    eps = fd.define_scalar(1e-5, dtype=DataType.Double)
    y, mean, invstd = fd.ops.batch_norm(x, w, b, None, None, momentum, eps, True)
    fd.add_output(y)
