
"""
Benchmark results:
Benchmark KernelTime for **graph0_thunder_0_nvFusion0_forward** requires investigation: torchcompile(47.662 us) and nvfuser(52.193 us) is not close (rtol=0.0, atol=0.0)


"""
import thunder
import thunder.core.dtypes as dtypes
import thunder.core.prims as prims
import torch

def nvFusion0(l_x_, l_r_, l_w_):
  # <eval_with_key>.20:5: 	    h = l_x_ + l_r_;  l_x_ = l_r_ = None
  t0 = prims.convert_element_type(l_x_, dtypes.float32)  # t0: "cuda:0 f32[4096, 4096]"
  t1 = prims.convert_element_type(l_r_, dtypes.float32)  # t1: "cuda:0 f32[4096, 4096]"
  t2 = prims.add(t0, t1)  # t2: "cuda:0 f32[4096, 4096]"
  h = prims.convert_element_type(t2, dtypes.bfloat16)  # h: "cuda:0 bf16[4096, 4096]"

  # <eval_with_key>.20:12: 	    float_2 = l_w_.float();  l_w_ = None
  float_2 = prims.convert_element_type(l_w_, dtypes.float32)  # float_2: "cuda:0 f32[4096]"

  # <eval_with_key>.20:7: 	    pow_1 = hf.pow(2)
  pow_1 = prims.pow(t2, 2.0)  # pow_1: "cuda:0 f32[4096, 4096]"

  # <eval_with_key>.20:14: 	    silu = torch.nn.functional.silu(hf);  hf = None
  t18 = prims.neg(t2)  # t18: "cuda:0 f32[4096, 4096]"
  t19 = prims.exp(t18)  # t19: "cuda:0 f32[4096, 4096]"
  t20 = prims.add(1.0, t19)  # t20: "cuda:0 f32[4096, 4096]"
  t21 = prims.reciprocal(t20)  # t21: "cuda:0 f32[4096, 4096]"
  silu = prims.mul(t2, t21)  # silu: "cuda:0 f32[4096, 4096]"

  # <eval_with_key>.20:8: 	    mean = pow_1.mean(-1, keepdim = True);  pow_1 = None
  t6 = prims.shallow_copy(pow_1)  # t6: "cuda:0 f32[4096, 4096]"
  t7 = prims.sum(t6, (1,))  # t7: "cuda:0 f32[4096]"
  t8 = prims.broadcast_in_dim(t7, [4096, 1], [0])  # t8: "cuda:0 f32[4096, 1]"
  t9 = prims.div(t8, 4096.0)  # t9: "cuda:0 f32[4096, 1]"
  mean = prims.shallow_copy(t9)  # mean: "cuda:0 f32[4096, 1]"

  # <eval_with_key>.20:9: 	    add_1 = mean + 1e-06;  mean = None
  add_1 = prims.add(mean, 1e-06)  # add_1: "cuda:0 f32[4096, 1]"

  # <eval_with_key>.20:10: 	    rsqrt = torch.rsqrt(add_1);  add_1 = None
  rsqrt = prims.rsqrt(add_1)  # rsqrt: "cuda:0 f32[4096, 1]"

  # <eval_with_key>.20:11: 	    mul = hf * rsqrt;  rsqrt = None
  t13 = prims.broadcast_in_dim(rsqrt, (4096, 4096), (0, 1))  # t13: "cuda:0 f32[4096, 4096]"
  mul = prims.mul(t2, t13)  # mul: "cuda:0 f32[4096, 4096]"

  # <eval_with_key>.20:13: 	    y = mul * float_2;  mul = float_2 = None
  t16 = prims.broadcast_in_dim(float_2, (4096, 4096), (1,))  # t16: "cuda:0 f32[4096, 4096]"
  y = prims.mul(mul, t16)  # y: "cuda:0 f32[4096, 4096]"

  # <eval_with_key>.20:15: 	    mul_2 = y * silu;  y = silu = None
  mul_2 = prims.mul(y, silu)  # mul_2: "cuda:0 f32[4096, 4096]"

  # <eval_with_key>.20:16: 	    to = mul_2.to(torch.bfloat16);  mul_2 = None
  to = prims.convert_element_type(mul_2, dtypes.bfloat16)  # to: "cuda:0 bf16[4096, 4096]"
  return [h, to]

from thunder.executors.torch_compile import make_compiled as make_torch_compile_callable
import thunder.examine

inputs = [torch.testing.make_tensor((16777217,), dtype=torch.bfloat16,  device='cuda:0', requires_grad=False, low=None, high=None,).as_strided((4096, 4096), (4096, 1), 1),torch.testing.make_tensor((4096, 4096), dtype=torch.bfloat16,  device='cuda:0', requires_grad=False, low=None, high=None,),torch.testing.make_tensor((4096,), dtype=torch.bfloat16,  device='cuda:0', requires_grad=False, low=None, high=None,),]

jfn = thunder.jit(nvFusion0)
jfn(*inputs)

trc = thunder.last_traces(jfn)[-1]
fusion_symbols = thunder.examine.get_fusion_symbols(trc)
assert len(fusion_symbols) == 1
bsym = fusion_symbols[0]

# NOTE: The nvFusion function cannot be compiled directly using `torch.compile`.
# It must first be processed by Thunder into BoundSymbols and compiled with `make_torch_compile_callable`.
# Additionally, it's recommended to visually verify that `bsym` matches the
# `nvFusion` function above by printing it using `print(bsym)`.
torch_compiled_callable = make_torch_compile_callable(bsym.subsymbols, bsym.flat_args, bsym.flat_outs)

from thunder.dynamo.benchmark_utils import KernelTime
measurement = KernelTime(threshold=0.1, min_run_time=0.01, max_run_time=10.0).time("torch_compiled_callable(*inputs)", globals={"torch_compiled_callable":torch_compiled_callable, "inputs": inputs})
print(measurement)
