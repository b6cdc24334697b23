"""A deep, narrow Llama-style training step under thunderfx: hundreds of fusion records from one step.

Each of its layers launches the same kinds of fusions as the seed model's (RMSNorm, RoPE, SwiGLU,
residual adds, and their backward), so the step holds many fusion records of few distinct kinds:
the shape of a real training step, with a width that keeps the run short. Used by the round-trip
benchmark (benchmarks/bench_roundtrip.py, issue #13):

    fusiondiff capture repro/roundtrip/deep_step.py -o live.json -- --layers 66
"""

from __future__ import annotations

import argparse
import time

import torch
from litgpt import GPT, Config
from thunder.dynamo import thunderfx


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=66, help="layers (66: about 530 fusion records a step)")
    parser.add_argument("--embd", type=int, default=1024, help="model width (n_embd)")
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--block", type=int, default=512, help="sequence length")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--steps", type=int, default=2, help="training steps (the first compiles)")
    args = parser.parse_args()

    config = Config.from_name(
        "Llama-3-8B",
        n_layer=args.layers,
        n_embd=args.embd,
        n_head=args.heads,
        n_query_groups=args.heads,
        intermediate_size=args.embd * 11 // 4,
        block_size=args.block,
        padded_vocab_size=32768,
        vocab_size=32768,
    )
    torch.manual_seed(0)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        model = GPT(config)
        idx = torch.randint(0, config.padded_vocab_size, (args.batch, args.block))
    torch.set_default_dtype(previous)
    compiled = thunderfx(model)
    for step in range(args.steps):
        started = time.perf_counter()
        logits = compiled(idx)
        loss = torch.nn.functional.cross_entropy(logits.float().flatten(0, 1), idx.flatten())
        loss.backward()
        torch.cuda.synchronize()
        print(f"step {step}: loss {loss.item():.4f}, {time.perf_counter() - started:.1f} s", flush=True)


if __name__ == "__main__":
    main()
