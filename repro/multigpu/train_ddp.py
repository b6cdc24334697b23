"""A small litgpt model under PyTorch DistributedDataParallel and thunderfx: 2 training steps, bf16.

    torchrun --nproc-per-node 2 -m fusiondiff capture repro/multigpu/train_ddp.py -o OUT/live.json

``--order thunderfx-first`` (default): ``thunderfx(model)``, then DDP around the compiled module,
with Dynamo's DDPOptimizer off (``torch._dynamo.config.optimize_ddp = False``): Thunder receives
the one graph it receives on a single GPU, and DDP's C++ reducer all-reduces the gradients.
``--order ddp-first``: ``thunderfx(DDP(model))``, the order of Thunder's own benchmark
(``benchmark_litgpt.py``) and of the earlier attempt that recorded no nvFusion.
``--optimize-ddp``: leave the DDPOptimizer on (it splits the graph at DDP's bucket boundaries and
hands each piece to Thunder). Either order meets the DDPOptimizer when it is on: it applies to any
frame compiled inside DDP's forward (``DistributedDataParallel._get_active_ddp_module``).
README.md says what was read about it.
"""

from __future__ import annotations

import torch
from parallel import arguments, build_model, finish, plant_parameter, report_thunderfx, say, start, tokens, train
from thunder.dynamo import thunderfx
from torch.nn.parallel import DistributedDataParallel as DDP


def main() -> None:
    parser = arguments(__doc__ or "", ("thunderfx-first", "ddp-first"))
    parser.add_argument(
        "--optimize-ddp", action="store_true", help="leave Dynamo's DDPOptimizer on (graph split at DDP buckets)"
    )
    args = parser.parse_args()
    r = start()
    torch._dynamo.config.optimize_ddp = bool(args.optimize_ddp)
    say(r.rank, f"order {args.order}, torch._dynamo.config.optimize_ddp = {torch._dynamo.config.optimize_ddp}")
    model = build_model(args, r)
    plant_parameter(model, r, args)
    if args.order == "thunderfx-first":
        compiled = thunderfx(model)
        # thunderfx returns its own object around torch.compile's module: DDP wraps that module
        wrapped = DDP(compiled._func, device_ids=[r.local_rank])
        step_model = wrapped
    else:
        wrapped = DDP(model, device_ids=[r.local_rank])
        compiled = thunderfx(wrapped)
        step_model = compiled
    idx = tokens(args, model, r)
    train(step_model, wrapped.parameters(), idx, r, args.steps)
    report_thunderfx(compiled, r)
    finish(r, args.destroy_group)


if __name__ == "__main__":
    main()
