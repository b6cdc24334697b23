"""Thunder's wrapper holds two FusionDefinitions; ``last_used`` is the one of the latest call."""

from pathlib import Path

from repro.zoo.common import capture_live, replay_text, scenario_main

CAUSE = "definition"
STORY = "the region ran on a contiguous input, then on a transposed one: last_used is the transposed fusion"

SCRIPT = "last_used_repro.py"
"""Where the live side leaves the script it wrote: the reconstructed side runs in another process."""


def live(out: Path) -> None:
    import thunder
    import torch

    jfn = thunder.jit(lambda a: (a.float() * a.float()).sum(-1))
    a = torch.randn(1024, 4096, dtype=torch.bfloat16, device="cuda")
    jfn(a)
    capture_live(out, lambda: jfn(a))
    transposed = torch.randn(4096, 1024, dtype=torch.bfloat16, device="cuda").t()
    jfn(transposed)  # a second FusionDefinition in the same wrapper
    trace = thunder.last_traces(jfn)[-1]
    bsym = next(b for b in trace.bound_symbols if b.sym.name.startswith("nvFusion"))
    wrapper = bsym._call_ctx[bsym.sym.name]
    print(f"wrapper cache: {wrapper.cache_info()}")
    # what a user does: take last_used and write its repro, believing it is the fusion they timed
    (out / SCRIPT).write_text(str(wrapper.last_used.repro_script_for([transposed])))


def reconstructed(out: Path) -> None:
    replay_text(out, (out / SCRIPT).read_text())


if __name__ == "__main__":
    scenario_main(live, reconstructed)
