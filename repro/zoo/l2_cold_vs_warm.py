"""The live side was timed with a warm L2, the reconstructed side with L2 flushed before each sample."""

import dataclasses
from pathlib import Path

from repro.zoo.common import (
    PROTOCOL,
    RMSNORM,
    build,
    capture_live,
    replay_fusiondiff_repro,
    rmsnorm_inputs,
    scenario_main,
)

CAUSE = "l2_mode"
STORY = "live samples ran back to back (32 MiB of inputs stay in the 60 MiB L2); the replay flushed L2 before each"


def live(out: Path) -> None:
    fd = build(RMSNORM, "define_rmsnorm")
    inputs = rmsnorm_inputs()
    capture_live(out, lambda: fd.execute(inputs), protocol=dataclasses.replace(PROTOCOL, l2_mode="warm"))


def reconstructed(out: Path) -> None:
    replay_fusiondiff_repro(out)


if __name__ == "__main__":
    scenario_main(live, reconstructed)
