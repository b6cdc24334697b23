# refused: fd.ops.index_put_accumulate (line 10) | FusionCache (line 11)
# 2025: fd.ops.index_put_accumulate (df447be6c 2025-04-23); direct does not bind it.
import torch
from nvfuser import FusionCache, FusionDefinition, DataType

with FusionDefinition() as fd:
    acc = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    index = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int)
    value = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    fd.add_output(fd.ops.index_put_accumulate(acc, index, value))
print(FusionCache.get().num_fusions())
