"""A litgpt training step (forward and backward) under thunderfx, for `fusiondiff capture`.

    fusiondiff capture repro/fidelity/train_step.py --model pythia-1b --layers 2 --block 512 --batch 2 -- -o live.json

The seed model of Thunder issue #1869 is ``--model Llama-3-8B --layers 3 --block 1024 --batch 4``.
"""

from __future__ import annotations

import argparse

import torch
from litgpt import GPT, Config
from thunder.dynamo import thunderfx


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="Llama-3-8B", help="litgpt config name")
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--block", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--steps", type=int, default=2, help="training steps (the first compiles)")
    args = parser.parse_args()

    config = Config.from_name(args.model)
    config.n_layer, config.block_size = args.layers, args.block
    torch.manual_seed(0)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        model = GPT(config)
        idx = torch.randint(0, config.padded_vocab_size, (args.batch, args.block))
    torch.set_default_dtype(previous)
    compiled = thunderfx(model)
    for _ in range(args.steps):
        logits = compiled(idx)
        loss = torch.nn.functional.cross_entropy(logits.float().flatten(0, 1), idx.flatten())
        loss.backward()
    torch.cuda.synchronize()
    print(f"{args.model}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
