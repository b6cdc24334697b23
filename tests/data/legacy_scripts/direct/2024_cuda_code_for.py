# Hand translation of ../2024_cuda_code_for.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t1 = fd.ops.log1p(fd.ops.exp(t0))
    fd.add_output(t1)

inputs = [torch.randn(333, 777, device="cuda")]
fd.execute(inputs)
code = fd.fec.get_cuda_kernel(inputs, intrinsic_code=False)
ir = fd.fec.get_scheduled_ir(inputs, tensor_transforms=True)
last = fd.fec.get_most_recent_scheduled_ir()
print(len(code), len(ir), len(last))
