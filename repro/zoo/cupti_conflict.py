"""nvFuser's PythonProfiler ran earlier in the live process: the seed's profiler sum then reads 0."""

from pathlib import Path

from fusiondiff.recording.seed_method import SEED_PROTOCOL
from repro.zoo.common import RMSNORM, build, capture_live, replay_fusiondiff_repro, rmsnorm_inputs, scenario_main

CAUSE = "measurement"
STORY = "PythonProfiler took CUPTI first; torch.profiler then sees no kernel events and the seed's sum is 0.0"


def live(out: Path) -> None:
    from nvfuser_direct import PythonProfiler

    fd = build(RMSNORM, "define_rmsnorm")
    inputs = rmsnorm_inputs()
    with PythonProfiler():
        fd.execute(inputs)
    capture_live(out, lambda: fd.execute(inputs), protocol=SEED_PROTOCOL)


def reconstructed(out: Path) -> None:
    replay_fusiondiff_repro(out)


if __name__ == "__main__":
    scenario_main(live, reconstructed)
