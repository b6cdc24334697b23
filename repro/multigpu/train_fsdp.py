"""A small litgpt model under FSDP2 (``torch.distributed.fsdp.fully_shard``) and thunderfx: 2
training steps, bf16.

    torchrun --nproc-per-node 2 -m fusiondiff capture repro/multigpu/train_fsdp.py -o OUT/live.json

``--order fsdp-first`` (default): ``fully_shard`` on each transformer block and on the root, then
``thunderfx`` of the sharded model: the order Thunder 0.2.6's own benchmark uses for FSDP2 with
Thunder as Dynamo's backend (``thunder/benchmarks/benchmark_litgpt.py``: ``setup_distributed``
before ``setup_compile`` when ``dynamo`` is in ``--compile``, cache_size_limit raised to 64).
``--order thunderfx-first``: ``thunderfx`` each block first, then ``fully_shard`` (not in Thunder's
sources; a try). ``--plant-offset-rank R`` plants the token ids only: FSDP2 owns the parameters'
storage (its all-gather buffers), so a parameter cannot be planted.
"""

from __future__ import annotations

import torch
from parallel import arguments, build_model, finish, report_thunderfx, say, start, tokens, train
from thunder.dynamo import thunderfx
from torch.distributed.fsdp import fully_shard


def main() -> None:
    args = arguments(__doc__ or "", ("fsdp-first", "thunderfx-first")).parse_args()
    r = start()
    # FSDP2's hooks break Dynamo's graph at every block: more graphs than the default cache allows
    torch._dynamo.config.cache_size_limit = 64
    say(r.rank, f"order {args.order}")
    model = build_model(args, r)
    blocks = list(model.transformer.h)
    if args.order == "fsdp-first":
        for block in blocks:
            fully_shard(block)
        fully_shard(model)
        compiled = thunderfx(model)
        step_model = compiled
        report_from = [compiled]
    else:
        report_from = []
        for i, block in enumerate(blocks):
            compiled_block = thunderfx(block)
            report_from.append(compiled_block)
            model.transformer.h[i] = compiled_block._func
            fully_shard(model.transformer.h[i])
        fully_shard(model)
        step_model = model
    idx = tokens(args, model, r)
    train(step_model, model.parameters(), idx, r, args.steps)
    for compiled in report_from:
        report_thunderfx(compiled, r)
    finish(r, args.destroy_group)


if __name__ == "__main__":
    main()
