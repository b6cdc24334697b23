"""Index values of an embedding gather: the live tokens are in [0, 255); the repro draws them over the vocabulary."""

from pathlib import Path

from repro.zoo.common import build, capture_live, replay_text, scenario_main

CAUSE = "index_value_range"
STORY = "live token ids lie in [0, 255) (255 hot rows); the hand-written repro draws ids over all 128256 rows"

DEFINITION = """
def define_embedding(fd):
    T0 = fd.define_tensor(shape=[4, 1024], contiguity=[True, True], dtype=DataType.Int, is_cpu=False)
    T1 = fd.define_tensor(shape=[128256, 4096], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T2 = fd.ops.reshape(T0, new_shape=[4096])
    T3 = fd.ops.broadcast(T2, is_broadcast_dim=[False, True])
    T4 = fd.ops.index_select(T1, T3, dim=0)
    T5 = fd.ops.cast(T4, dtype=DataType.Float)
    fd.add_output(fd.ops.cast(fd.ops.mul(T5, T5), dtype=DataType.BFloat16))
"""


def live(out: Path) -> None:
    import torch

    fd = build(DEFINITION, "define_embedding")
    idx = torch.randint(0, 255, (4, 1024), device="cuda")
    table = torch.randn(128256, 4096, dtype=torch.bfloat16, device="cuda")
    capture_live(out, lambda: fd.execute([idx, table]))


def reconstructed(out: Path) -> None:
    replay_text(
        out,
        f"""import torch
from nvfuser_direct import FusionDefinition, DataType
{DEFINITION}
with FusionDefinition() as fd:
    define_embedding(fd)
inputs = [
    torch.randint(0, 128256, (4, 1024), device="cuda:0"),
    torch.randn(128256, 4096, dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
""",
    )


if __name__ == "__main__":
    scenario_main(live, reconstructed)
