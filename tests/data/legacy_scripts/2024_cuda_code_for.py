# 2023-2025: FusionDefinition.cuda_code_for / scheduled_fusion_ir_for / last_scheduled_fusion_ir
# (602718d75 2023-04-06); direct asks the FusionExecutorCache (fd.fec) after the first execute.
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t1 = fd.ops.log1p(fd.ops.exp(t0))
    fd.add_output(t1)

inputs = [torch.randn(333, 777, device="cuda")]
fd.execute(inputs)
code = fd.cuda_code_for(inputs, intrinsic_code=False, override_user_schedule=False)
ir = fd.scheduled_fusion_ir_for(inputs, tensor_transforms=True)
last = fd.last_scheduled_fusion_ir()
print(len(code), len(ir), len(last))
