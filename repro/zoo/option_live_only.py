"""The live side passed a disable option (as Thunder's nv_disable_options does); the repro drops it."""

from pathlib import Path

from repro.zoo.common import (
    RMSNORM,
    build,
    capture_live,
    nvfuser_repro_of_live,
    replay_text,
    rmsnorm_inputs,
    scenario_main,
)

CAUSE = "options"
STORY = "the live execute passed _disable_options=['kernel_reuse']; nvFuser's repro calls fd.execute(inputs)"


def live(out: Path) -> None:
    fd = build(RMSNORM, "define_rmsnorm")
    inputs = rmsnorm_inputs()
    capture_live(out, lambda: fd.execute(inputs, _disable_options=["kernel_reuse"]))


def reconstructed(out: Path) -> None:
    replay_text(out, nvfuser_repro_of_live(out))


if __name__ == "__main__":
    scenario_main(live, reconstructed)
