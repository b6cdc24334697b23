"""Control: the same fusion, inputs and protocol on both sides. Nothing may be found."""

from pathlib import Path

from repro.zoo.common import RMSNORM, build, capture_live, replay_fusiondiff_repro, rmsnorm_inputs, scenario_main

CAUSE = None
STORY = "live RMSNorm on aligned inputs; fusiondiff's faithful repro replayed with the same protocol"


def live(out: Path) -> None:
    fd = build(RMSNORM, "define_rmsnorm")
    inputs = rmsnorm_inputs()
    capture_live(out, lambda: fd.execute(inputs))


def reconstructed(out: Path) -> None:
    replay_fusiondiff_repro(out)


if __name__ == "__main__":
    scenario_main(live, reconstructed)
