"""Another process keeping the GPU busy with large elementwise work (not matmuls)."""
import pathlib, sys, time
import torch
x = torch.randn(1 << 28, device="cuda")
end = time.monotonic() + float(sys.argv[1]); n = 0
while time.monotonic() < end:
    for _ in range(20):
        x = torch.sin(x) * 1.0001 + 0.5
    torch.cuda.synchronize(); n += 1
    if n == 1: pathlib.Path(sys.argv[2]).write_text("running\n")
print("busy_elementwise rounds", n)
