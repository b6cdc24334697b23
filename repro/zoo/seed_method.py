"""The live side timed with the seed issue's method (one profiled call, sum of every event)."""

from pathlib import Path

from fusiondiff.recording.seed_method import SEED_PROTOCOL
from repro.zoo.common import RMSNORM, build, capture_live, replay_fusiondiff_repro, rmsnorm_inputs, scenario_main

CAUSE = "measurement"
STORY = "live: 5 warm-ups, one profiled call, sum of device_time over every profiler event; replay: the protocol"


def live(out: Path) -> None:
    fd = build(RMSNORM, "define_rmsnorm")
    inputs = rmsnorm_inputs()
    capture_live(out, lambda: fd.execute(inputs), protocol=SEED_PROTOCOL)


def reconstructed(out: Path) -> None:
    replay_fusiondiff_repro(out)


if __name__ == "__main__":
    scenario_main(live, reconstructed)
