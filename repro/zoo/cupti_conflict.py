"""nvFuser's PythonProfiler ran earlier in the live process: the seed's profiler sum then reads 0."""

from pathlib import Path

from fusiondiff.model import TimingProtocol
from fusiondiff.recording.seed_method import METHOD
from repro.zoo.common import RMSNORM, build, capture_live, replay_fusiondiff_repro, rmsnorm_inputs, scenario_main

CAUSE = "measurement"
STORY = "PythonProfiler took CUPTI first; torch.profiler then sees no kernel events and the seed's sum is 0.0"


def live(out: Path) -> None:
    from nvfuser_direct import PythonProfiler

    fd = build(RMSNORM, "define_rmsnorm")
    inputs = rmsnorm_inputs()
    with PythonProfiler():
        fd.execute(inputs)
    seed = TimingProtocol(method=METHOD, warmup=5, samples=1, l2_mode="warm")
    capture_live(out, lambda: fd.execute(inputs), protocol=seed)


def reconstructed(out: Path) -> None:
    replay_fusiondiff_repro(out)


if __name__ == "__main__":
    scenario_main(live, reconstructed)
