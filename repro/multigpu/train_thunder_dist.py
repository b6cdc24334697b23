"""A small litgpt model under Thunder's own data parallelism (``thunder.distributed.ddp`` and
``fsdp``, both in Thunder 0.2.6), compiled with ``thunder.jit``: 2 training steps, bf16.

    torchrun --nproc-per-node 2 -m fusiondiff capture repro/multigpu/train_thunder_dist.py -o OUT/live.json -- --mode ddp

As in Thunder's docstring example and its benchmark: ``thunder.distributed.ddp(thunder.jit(model))``
(Thunder inserts the gradient all-reduce into the backward trace itself) and
``thunder.distributed.fsdp(thunder.jit(model))`` (ZeRO-2 by default).
"""

from __future__ import annotations

import thunder
from parallel import arguments, build_model, finish, plant_parameter, say, start, tokens, train


def main() -> None:
    parser = arguments(__doc__ or "", ("jit-first",))
    parser.add_argument("--mode", choices=("ddp", "fsdp"), default="ddp")
    args = parser.parse_args()
    r = start()
    import thunder.distributed as tdist

    model = build_model(args, r)
    if args.mode == "ddp":
        plant_parameter(model, r, args)
        compiled = tdist.ddp(thunder.jit(model), broadcast_from=0)
    else:
        compiled = tdist.fsdp(thunder.jit(model))
    idx = tokens(args, model, r)
    train(compiled, compiled.parameters(), idx, r, args.steps)
    forward = sum(1 for b in thunder.last_traces(compiled)[-1].bound_symbols if b.sym.name.startswith("nvFusion"))
    backward_traces = thunder.last_backward_traces(compiled)
    backward = (
        sum(1 for b in backward_traces[-1].bound_symbols if b.sym.name.startswith("nvFusion")) if backward_traces else 0
    )
    say(
        r.rank, f"thunder.distributed.{args.mode}: nvFusions in the last traces: {forward} forward, {backward} backward"
    )
    finish(r, args.destroy_group)


if __name__ == "__main__":
    main()
