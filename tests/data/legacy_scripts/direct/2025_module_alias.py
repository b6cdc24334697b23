# Hand translation of ../2025_module_alias.py for nvfuser_direct.
import torch
import nvfuser_direct as nvf


def define(fd: nvf.FusionDefinition) -> nvf.TensorView:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=nvf.DataType.Float)
    t1 = fd.ops.clamp(t0, fd.define_scalar(-1.0), fd.define_scalar(1.0))
    fd.add_output(t1)
    return t1


with nvf.FusionDefinition() as fd:
    out: nvf.TensorView = define(fd)

fd.execute([torch.randn(4096, 4096, device="cuda")])
