from thunder.dynamo.benchmark_utils import KernelTime
# CUDA devices:
#  0: NVIDIA H100 80GB HBM3
# torch version: 2.11.0+cu130
# cuda version: 13.0
import torch
from nvfuser_direct import FusionDefinition, DataType
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[4096, 4096], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv1 = fd.define_tensor(shape=[4096, 4096], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.define_tensor(shape=[4096], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv3 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv4 = fd.ops.cast(tv1, dtype=DataType.Float)
    tv5 = fd.ops.add(tv3, tv4)
    tv6 = fd.ops.cast(tv5, dtype=DataType.BFloat16)
    tv8 = fd.ops.pow(tv5, 2.00000)
    tv14 = fd.ops.sum(tv8, dims=[1], dtype=DataType.Float)
    tv15 = fd.ops.broadcast(tv14, is_broadcast_dim=[False, True])
    tv16 = fd.ops.cast(tv15, dtype=DataType.Float)
    c77 = fd.ops.reciprocal(4096.00)
    tv17 = fd.ops.mul(tv16, c77)
    tv18 = fd.ops.add(tv17, 1.00000e-06)
    tv19 = fd.ops.rsqrt(tv18)
    tv20 = fd.ops.expand(tv19, shape=[4096, 4096])
    tv21 = fd.ops.mul(tv5, tv20)
    tv7 = fd.ops.cast(tv2, dtype=DataType.Float)
    tv22 = fd.ops.broadcast(tv7, is_broadcast_dim=[True, False])
    tv23 = fd.ops.expand(tv22, shape=[4096, 4096])
    tv24 = fd.ops.mul(tv21, tv23)
    tv9 = fd.ops.neg(tv5)
    tv10 = fd.ops.exp(tv9)
    tv11 = fd.ops.add(1.00000, tv10)
    tv12 = fd.ops.reciprocal(tv11)
    tv13 = fd.ops.mul(tv5, tv12)
    tv25 = fd.ops.mul(tv24, tv13)
    tv26 = fd.ops.cast(tv25, dtype=DataType.BFloat16)
    fd.add_output(tv6)
    fd.add_output(tv26)
with FusionDefinition() as fd:
    nvfuser_fusion(fd)

inputs = [
    torch.testing.make_tensor((4096, 4096), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((4096, 4096), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((4096,), dtype=torch.bfloat16, device='cuda:0'),
]

nvfuser_fn = fd.execute
measurement = KernelTime(threshold=0.1, min_run_time=0.01, max_run_time=10.0).time("nvfuser_fn(inputs)", globals={"nvfuser_fn":nvfuser_fn, "inputs": inputs})
print(measurement)
"""
[h, to] = nvFusion0(l_x_, l_r_, l_w_)
  # t0 = prims.convert_element_type(l_x_, dtypes.float32)  # t0: "cuda:0 f32[4096, 4096]"
  # t1 = prims.convert_element_type(l_r_, dtypes.float32)  # t1: "cuda:0 f32[4096, 4096]"
  # t2 = prims.add(t0, t1)  # t2: "cuda:0 f32[4096, 4096]"
  # h = prims.convert_element_type(t2, dtypes.bfloat16)  # h: "cuda:0 bf16[4096, 4096]"
  # float_2 = prims.convert_element_type(l_w_, dtypes.float32)  # float_2: "cuda:0 f32[4096]"
  # pow_1 = prims.pow(t2, 2.0)  # pow_1: "cuda:0 f32[4096, 4096]"
  # t18 = prims.neg(t2)  # t18: "cuda:0 f32[4096, 4096]"
  # t19 = prims.exp(t18)  # t19: "cuda:0 f32[4096, 4096]"
  # t20 = prims.add(1.0, t19)  # t20: "cuda:0 f32[4096, 4096]"
  # t21 = prims.reciprocal(t20)  # t21: "cuda:0 f32[4096, 4096]"
  # silu = prims.mul(t2, t21)  # silu: "cuda:0 f32[4096, 4096]"
  # t6 = prims.shallow_copy(pow_1)  # t6: "cuda:0 f32[4096, 4096]"
  # t7 = prims.sum(t6, (1,))  # t7: "cuda:0 f32[4096]"
  # t8 = prims.broadcast_in_dim(t7, [4096, 1], [0])  # t8: "cuda:0 f32[4096, 1]"
  # t9 = prims.div(t8, 4096.0)  # t9: "cuda:0 f32[4096, 1]"
  # mean = prims.shallow_copy(t9)  # mean: "cuda:0 f32[4096, 1]"
  # add_1 = prims.add(mean, 1e-06)  # add_1: "cuda:0 f32[4096, 1]"
  # rsqrt = prims.rsqrt(add_1)  # rsqrt: "cuda:0 f32[4096, 1]"
  # t13 = prims.broadcast_in_dim(rsqrt, (4096, 4096), (0, 1))  # t13: "cuda:0 f32[4096, 4096]"
  # mul = prims.mul(t2, t13)  # mul: "cuda:0 f32[4096, 4096]"
  # t16 = prims.broadcast_in_dim(float_2, (4096, 4096), (1,))  # t16: "cuda:0 f32[4096, 4096]"
  # y = prims.mul(mul, t16)  # y: "cuda:0 f32[4096, 4096]"
  # mul_2 = prims.mul(y, silu)  # mul_2: "cuda:0 f32[4096, 4096]"
  # to = prims.convert_element_type(mul_2, dtypes.bfloat16)  # to: "cuda:0 bf16[4096, 4096]"

Benchmark results:
Benchmark KernelTime for **graph0_thunder_0_nvFusion0_forward** requires investigation: torchcompile(47.662 us) and nvfuser(52.193 us) is not close (rtol=0.0, atol=0.0)

"""

