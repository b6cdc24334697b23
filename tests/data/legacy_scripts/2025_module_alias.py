# 2025: the module imported under an alias, its classes named through it (nvf.FusionDefinition,
# nvf.DataType, nvf.Tensor); direct's classes are TensorView and Val.
import torch
import nvfuser as nvf


def define(fd: nvf.FusionDefinition) -> nvf.Tensor:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=nvf.DataType.Float)
    t1 = fd.ops.clamp(t0, fd.define_scalar(-1.0), fd.define_scalar(1.0))
    fd.add_output(t1)
    return t1


with nvf.FusionDefinition() as fd:
    out: nvf.Tensor = define(fd)

fd.execute([torch.randn(4096, 4096, device="cuda")])
