# Hand translation of ../2024_type_hints.py for nvfuser_direct.
import torch
from nvfuser_direct import FusionDefinition, DataType, TensorView as Tensor, Val as Scalar


def scale_shift(fd: FusionDefinition, x: Tensor, scale: Scalar, shift: Scalar) -> Tensor:
    return fd.ops.add(fd.ops.mul(x, scale), shift)


def tanh_gate(fd: FusionDefinition, x: Tensor) -> Tensor:
    return fd.ops.mul(x, fd.ops.tanh(x))


with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    s0 = fd.define_scalar(1.5, dtype=DataType.Double)
    s1 = fd.define_scalar(-0.25, dtype=DataType.Double)
    t1 = tanh_gate(fd, scale_shift(fd, t0, s0, s1))
    fd.add_output(t1)

fd.execute([torch.randn(512, 4096, device="cuda")])
