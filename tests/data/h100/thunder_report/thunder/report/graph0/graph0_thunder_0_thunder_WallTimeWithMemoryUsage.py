
from math import inf
from math import nan
NoneType = type(None)
import torch
from torch import device
import torch.fx._pytree as fx_pytree
import torch.utils._pytree as pytree
import thunder
from thunder.dynamo.benchmark_utils import WallTimeWithMemoryUsage

from thunder.dev_utils import nvtx_profile_transform


class DynamoModule(torch.nn.Module):
    def forward(self, l_x_: "bf16[4096, 4096][4096, 1]cuda:0", l_r_: "bf16[4096, 4096][4096, 1]cuda:0", l_w_: "bf16[4096][1]cuda:0"):
        # File: repro/thunder_report/record.py:35 in block, code: h = x + r
        h: "bf16[4096, 4096][4096, 1]cuda:0" = l_x_ + l_r_;  l_x_ = l_r_ = None

        # File: repro/thunder_report/record.py:36 in block, code: hf = h.float()
        hf: "f32[4096, 4096][4096, 1]cuda:0" = h.float()

        # File: repro/thunder_report/record.py:37 in block, code: y = hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()
        pow_1: "f32[4096, 4096][4096, 1]cuda:0" = hf.pow(2)
        mean: "f32[4096, 1][1, 1]cuda:0" = pow_1.mean(-1, keepdim = True);  pow_1 = None
        add_1: "f32[4096, 1][1, 1]cuda:0" = mean + 1e-06;  mean = None
        rsqrt: "f32[4096, 1][1, 1]cuda:0" = torch.rsqrt(add_1);  add_1 = None
        mul: "f32[4096, 4096][4096, 1]cuda:0" = hf * rsqrt;  rsqrt = None
        float_2: "f32[4096][1]cuda:0" = l_w_.float();  l_w_ = None
        y: "f32[4096, 4096][4096, 1]cuda:0" = mul * float_2;  mul = float_2 = None

        # File: repro/thunder_report/record.py:38 in block, code: return h, (y * torch.nn.functional.silu(hf)).to(x.dtype)
        silu: "f32[4096, 4096][4096, 1]cuda:0" = torch.nn.functional.silu(hf);  hf = None
        mul_2: "f32[4096, 4096][4096, 1]cuda:0" = y * silu;  y = silu = None
        to: "bf16[4096, 4096][4096, 1]cuda:0" = mul_2.to(torch.bfloat16);  mul_2 = None
        return (h, to)

def test_graph0_thunder_0():
    inputs = [
        torch.testing.make_tensor((16777217,), dtype=torch.bfloat16,  device='cuda:0', requires_grad=False, low=-5.28125, high=5.59375,).as_strided((4096, 4096), (4096, 1), 1),
        torch.testing.make_tensor((4096, 4096), dtype=torch.bfloat16,  device='cuda:0', requires_grad=False, low=-5.21875, high=5.3125,),
        torch.testing.make_tensor((4096,), dtype=torch.bfloat16,  device='cuda:0', requires_grad=False, low=-3.921875, high=3.734375,),
    ]

    model = DynamoModule()

    compiled_model = thunder.jit(model)
    # forward
    fwd_measurement = WallTimeWithMemoryUsage(threshold=0.1, min_run_time=0.01, max_run_time=10.0).time("compiled_model(*inputs)", globals={"compiled_model":compiled_model, "inputs": inputs})
    print("fwd_measurement=", fwd_measurement)
    if hasattr(fwd_measurement, "max_allocated_memory"):
        from thunder.dynamo.benchmark_utils import get_pretty_memory_str
        print(f"fwd_measurement.max_allocated_memory={get_pretty_memory_str(fwd_measurement.max_allocated_memory)}")


if __name__ == "__main__":
    test_graph0_thunder_0()


"""
Environment information get from `torch.utils.collect_env.get_pretty_env_info()`:
CUDA devices:
  0: NVIDIA H100 80GB HBM3
CUDA version: 13.0
botorch==0.18.1
gpytorch==1.15.2
mypy_extensions==1.1.0
numpy==2.5.2
numpyro==0.21.0
nvfuser_cu130_torch210==0.2.36.dev20260301
nvidia-cublas==13.1.0.3
nvidia-cuda-cupti==13.0.85
nvidia-cuda-nvrtc==13.0.88
nvidia-cuda-runtime==13.0.96
nvidia-cudnn-cu13==9.19.0.56
nvidia-cufft==12.0.0.61
nvidia-curand==10.4.0.35
nvidia-cusolver==12.0.4.66
nvidia-cusparse==12.6.3.3
nvidia-cusparselt-cu13==0.8.0
nvidia-nccl-cu13==2.28.9
nvidia-nvjitlink==13.0.88
nvidia-nvtx==13.0.85
onnx==1.23.1
onnx-ir==1.0.0
onnxruntime==1.30.0
onnxscript==0.7.2
optree==0.20.0
pytorch-lightning==2.6.6
torch==2.11.0
torch-geometric==2.8.0.post1
torchaudio==2.11.0
torchdiffeq==0.2.5
torchmetrics==1.9.0
torchvision==0.26.0
triton==3.6.0

Versions of Thunder related libraries:
lightning-thunder==0.2.6
nvfuser_cu130_torch210==0.2.36.dev20260301

Max_allocated_memory: [graph0_thunder_0 forward] inductor_backend(201.344 MB); thunder(201.344 MB)
Benchmark WallTimeWithMemoryUsage for **graph0_thunder_0 forward** requires investigation: thunder(290.215 us) and inductor_backend(49.666 us) is not close (rtol=0.0, atol=0.0)

"""

