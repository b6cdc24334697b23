"""Proves the GPU harness: the seed's RMSNorm fusion (Thunder issue #1869) built with nvfuser_direct
runs on the device and matches torch."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu


def define_seed_rmsnorm(fd) -> None:
    """The seed issue's saved repro definition, with only the import changed to nvfuser_direct."""
    from nvfuser_direct import DataType

    T0 = fd.define_tensor(
        shape=[4, 1024, 4096],
        contiguity=[True, True, True],
        dtype=DataType.BFloat16,
        is_cpu=False,
        stride_order=[2, 1, 0],
    )
    T1 = fd.define_tensor(shape=[4096], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.cast(T1, dtype=DataType.Float)
    T8 = fd.ops.broadcast_in_dim(T3, shape=[4, 1024, 4096], broadcast_dims=[2])
    T9 = fd.ops.mul(T2, T2)
    T10 = fd.ops.sum(T9, dims=[2], keepdim=False, dtype=DataType.Null)
    T15 = fd.ops.broadcast_in_dim(T10, shape=[4, 1024, 1], broadcast_dims=[0, 1])
    S16 = fd.define_scalar(4096.00, dtype=DataType.Double)
    S17 = fd.ops.reciprocal(S16)
    T18 = fd.ops.mul(T15, S17)
    S19 = fd.define_scalar(1.00000e-05, dtype=DataType.Double)
    T20 = fd.ops.add(T18, S19)
    T21 = fd.ops.rsqrt(T20)
    T26 = fd.ops.broadcast_in_dim(T21, shape=[4, 1024, 4096], broadcast_dims=[0, 1, 2])
    T27 = fd.ops.mul(T2, T26)
    T28 = fd.ops.mul(T27, T8)
    T29 = fd.ops.cast(T28, dtype=DataType.BFloat16)
    fd.add_output(T21)
    fd.add_output(T29)


def test_seed_rmsnorm_matches_torch():
    import torch
    from nvfuser_direct import FusionDefinition

    with FusionDefinition() as fd:
        define_seed_rmsnorm(fd)
    torch.manual_seed(0)
    x = torch.randn(4, 1024, 4096, dtype=torch.bfloat16, device="cuda")
    w = torch.randn(4096, dtype=torch.bfloat16, device="cuda")
    rstd, y = fd.execute([x, w])

    xf = x.float()
    ref_rstd = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)
    ref_y = (xf * ref_rstd * w.float()).to(torch.bfloat16)
    torch.testing.assert_close(rstd, ref_rstd, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(y, ref_y, rtol=1.6e-2, atol=1e-2)
    print(
        f"seed RMSNorm on {torch.cuda.get_device_name(0)}: max |y - ref| = {(y.float() - ref_y.float()).abs().max().item():.3g}"
    )
