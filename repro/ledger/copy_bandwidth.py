"""A device-to-device copy's bandwidth on the GPU (read + write bytes over time), CUDA events, 1 GiB."""

import torch

n = 1 << 30
src = torch.empty(n, dtype=torch.uint8, device="cuda")
dst = torch.empty_like(src)
for _ in range(3):
    dst.copy_(src)
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
figures = []
for _ in range(20):
    start.record()
    dst.copy_(src)
    end.record()
    end.synchronize()
    figures.append(2 * n / (start.elapsed_time(end) * 1e-3) / 1e9)
figures.sort()
print(f"copy bandwidth {torch.cuda.get_device_name(0)}: median {figures[10]:.0f} GB/s, max {figures[-1]:.0f} GB/s")
