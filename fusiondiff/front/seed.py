"""The seed case: litgpt's Llama-3-8B config cut to 3 layers, block 1024, batch 4, bf16, under
thunderfx (Thunder issue #1869). Used by the demo, the GPU tests and the benchmarks."""

from __future__ import annotations

from typing import Any

SEED_CONFIG = {"name": "Llama-3-8B", "n_layer": 3, "block_size": 1024, "batch": 4}


def build_seed_model(n_layer: int = 3, block_size: int = 1024, batch: int = 4, seed: int = 0) -> tuple[Any, Any, Any]:
    """Return ``(model, compiled, idx)``: the litgpt GPT in bf16 on the GPU, its ``thunderfx``
    compilation (not yet run), and token indices in [0, 255) as in the seed script."""
    import torch
    from litgpt import GPT, Config
    from thunder.dynamo import thunderfx

    cfg = Config.from_name(SEED_CONFIG["name"])
    cfg.n_layer = n_layer
    cfg.block_size = block_size
    previous = torch.get_default_dtype()
    torch.manual_seed(seed)
    # the seed builds the model under a bf16 default dtype; restore the caller's default after
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device("cuda"):
            model = GPT(cfg)
            idx = torch.randint(0, 255, (batch, block_size), dtype=torch.int64)
    finally:
        torch.set_default_dtype(previous)
    return model, thunderfx(model), idx
