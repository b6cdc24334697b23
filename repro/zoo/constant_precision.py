"""A constant printed with 6 significant digits: nvFuser's repro runs another number."""

from pathlib import Path

from repro.zoo.common import capture_live, nvfuser_repro_of_live, replay_text, scenario_main

CAUSE = "constant_precision"
STORY = "the region multiplies by 0.1234567891; nvFuser prints it as 0.123457 in its repro"


def live(out: Path) -> None:
    import thunder
    import torch

    jfn = thunder.jit(lambda a: (a * 0.1234567891).sum(-1))
    a = torch.randn(1024, 4096, device="cuda")
    jfn(a)
    capture_live(out, lambda: jfn(a))


def reconstructed(out: Path) -> None:
    replay_text(out, nvfuser_repro_of_live(out))


if __name__ == "__main__":
    scenario_main(live, reconstructed)
