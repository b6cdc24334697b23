"""Live input at storage offset 1 (2-byte aligned); nvFuser's repro rebuilds it at offset 0."""

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

CAUSE = "storage_offset"
STORY = "the live activation is a view at storage offset 1; nvFuser's repro makes a fresh, aligned tensor"


def live(out: Path) -> None:
    fd = build(RMSNORM, "define_rmsnorm")
    inputs = rmsnorm_inputs(offset=1)
    capture_live(out, lambda: fd.execute(inputs))


def reconstructed(out: Path) -> None:
    replay_text(out, nvfuser_repro_of_live(out))


if __name__ == "__main__":
    scenario_main(live, reconstructed)
