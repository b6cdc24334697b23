"""Live input is a row-strided view; the hand-written repro (as in bug reports) is contiguous."""

from pathlib import Path

from repro.zoo.common import build, capture_live, replay_text, scenario_main

CAUSE = "input_strides"
STORY = "the live input is a [4096, 4096] slice of a [4096, 4160] buffer; the repro uses make_tensor((4096, 4096))"

DEFINITION = """
def define_scale(fd):
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[False, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.ops.cast(T0, dtype=DataType.Float)
    T2 = fd.ops.mul(T1, T1)
    fd.add_output(fd.ops.cast(T2, dtype=DataType.BFloat16))
"""


def live(out: Path) -> None:
    import torch

    fd = build(DEFINITION, "define_scale")
    x = torch.randn(4096, 4160, dtype=torch.bfloat16, device="cuda")[:, :4096]
    capture_live(out, lambda: fd.execute([x]))


def reconstructed(out: Path) -> None:
    replay_text(
        out,
        f"""import torch
from nvfuser_direct import FusionDefinition, DataType
{DEFINITION}
with FusionDefinition() as fd:
    define_scale(fd)
inputs = [torch.testing.make_tensor((4096, 4096), dtype=torch.bfloat16, device="cuda:0")]
fd.execute(inputs)
""",
    )


if __name__ == "__main__":
    scenario_main(live, reconstructed)
