# 2023-2025: helpers annotated with the legacy classes Tensor and Scalar (direct: TensorView, Val),
# combining values with operators.
import torch
from nvfuser import FusionDefinition, DataType, Tensor, Scalar


def scale_shift(fd: FusionDefinition, x: Tensor, scale: Scalar, shift: Scalar) -> Tensor:
    return x * scale + shift


def tanh_gate(fd: FusionDefinition, x: Tensor) -> Tensor:
    return fd.ops.mul(x, fd.ops.tanh(x))


with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    s0 = fd.define_scalar(1.5, dtype=DataType.Double)
    s1 = fd.define_scalar(-0.25, dtype=DataType.Double)
    t1 = tanh_gate(fd, scale_shift(fd, t0, s0, s1))
    fd.add_output(t1)

fd.execute([torch.randn(512, 4096, device="cuda")])
