"""The live process ran the same fusion on another shape first; the repro runs in a fresh process."""

from pathlib import Path

from repro.zoo.common import build, capture_live, replay_fusiondiff_repro, scenario_main

CAUSE = "runtime_reuse"
STORY = "live: the fusion ran on [64, 128] before [4096, 4096], so nvFuser's cache holds another runtime; the repro starts fresh"

DEFINITION = """
def define_rowsum(fd):
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    fd.add_output(fd.ops.sum(fd.ops.mul(T0, T0), dims=[1]))
"""


def live(out: Path) -> None:
    import torch

    fd = build(DEFINITION, "define_rowsum")
    fd.execute([torch.randn(64, 128, device="cuda")])  # history: a runtime for another shape
    x = torch.randn(4096, 4096, device="cuda")
    capture_live(out, lambda: fd.execute([x]))


def reconstructed(out: Path) -> None:
    replay_fusiondiff_repro(out)


if __name__ == "__main__":
    scenario_main(live, reconstructed)
