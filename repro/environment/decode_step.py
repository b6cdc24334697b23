"""A one-token decode step of a small litgpt model under thunder.jit, repeated: many tiny fusions,
each a few microseconds of kernels behind tens of microseconds of host work (issue #27's host-bound
scenario):

    fusiondiff capture repro/environment/decode_step.py -o live.json -- --layers 2 --steps 6

The model is litgpt's Llama-3-8B config made small (``--layers``, ``--embd``); no KV cache: each
step is the forward of one token, the first step compiles.
"""

from __future__ import annotations

import argparse

import thunder
import torch
from litgpt import GPT, Config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--embd", type=int, default=256)
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args()
    config = Config.from_name(
        "Llama-3-8B",
        n_layer=args.layers,
        n_embd=args.embd,
        n_head=4,
        n_query_groups=2,
        intermediate_size=4 * args.embd,
        vocab_size=1024,
        padded_vocab_size=1024,
        block_size=64,
    )
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = GPT(config).to(torch.bfloat16)
        idx = torch.randint(0, config.padded_vocab_size, (1, 1))
    jitted = thunder.jit(model)
    with torch.no_grad():
        for _ in range(args.steps):
            logits = jitted(idx)
            idx = logits[:, -1:].argmax(-1)
    torch.cuda.synchronize()
    print("next token", int(idx.item()))


if __name__ == "__main__":
    main()
