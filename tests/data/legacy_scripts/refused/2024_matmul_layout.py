# refused: fd.ops._matmul_nt (line 10)
# 2023-2024: the internal layout matmuls _matmul_nt and friends (98aa20602 2023-05-03), removed in
# 8b13768a2 (2024-03-18).
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half)
    b = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half)
    fd.add_output(fd.ops._matmul_nt(a, b))
