"""The seed model's forward (litgpt Llama-3-8B, 3 layers, block 1024, batch 4, bf16, thunderfx) captured
under the protocol of the bundled H200 capture (tests/data/seed/live_forward.json: 5 warm-ups,
30 cold-L2 samples), for issue #39's case (c): the same session on another GPU.

    python3 repro/ledger/seed_forward.py OUT.json
"""

from __future__ import annotations

import sys

import torch

from fusiondiff.front.live import capture
from fusiondiff.front.seed import build_seed_model
from fusiondiff.records.model import TimingProtocol
from fusiondiff.records.options import RecordingOptions


def main(output: str) -> None:
    _, compiled, idx = build_seed_model()
    compiled(idx)
    torch.cuda.synchronize()
    options = RecordingOptions(protocol=TimingProtocol(warmup=5, samples=30, l2_mode="cold"))
    source = "seed model forward (litgpt Llama-3-8B, n_layer=3, block 1024, batch 4, bf16, thunderfx)"
    with capture(output, options=options, progress=print, source=source):
        compiled(idx)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main(sys.argv[1])
