"""What the multi-GPU training scripts share: the process group, the model, the planted input, the
training loop and the diagnostics that say where Thunder's regions went.

Run by the scripts beside it, under torchrun (one process per GPU), usually through fusiondiff:

    torchrun --nproc-per-node 2 -m fusiondiff capture repro/multigpu/train_ddp.py -o OUT/live.json

Needs CUDA GPUs, Thunder, nvFuser and litgpt. Every rank prints its diagnostics on stderr,
prefixed ``[rank R]``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class Rank:
    rank: int
    local_rank: int
    world_size: int
    device: torch.device


def say(rank: int, message: str) -> None:
    print(f"[rank {rank}] {message}", file=sys.stderr, flush=True)


def arguments(description: str, orders: tuple[str, ...]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--model", default="pythia-160m", help="litgpt config name (default pythia-160m)")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--block", type=int, default=256, help="sequence length")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--steps", type=int, default=2, help="training steps (the first compiles)")
    parser.add_argument("--order", choices=orders, default=orders[0], help=f"wrapping order (default {orders[0]})")
    parser.add_argument(
        "--plant-offset-rank",
        type=int,
        metavar="R",
        help="on rank R, the token ids (an input of the first nvFusion, the embedding's) are a view at "
        "storage offset 1 of a larger buffer; under DDP the embedding table too (2-byte aligned bf16)",
    )
    parser.add_argument(
        "--destroy-group", action="store_true", help="destroy the process group at the end of the script"
    )
    return parser


def start() -> Rank:
    """The process group (NCCL) and this rank's GPU, from torchrun's variables."""
    rank, local_rank = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
    world = int(os.environ["WORLD_SIZE"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    say(rank, f"{world} ranks, {torch.cuda.get_device_name(device)} cuda:{local_rank}, backend {dist.get_backend()}")
    return Rank(rank, local_rank, world, device)


def finish(r: Rank, destroy: bool) -> None:
    """Every rank reaches the end together, with nothing left in flight. The group is left to the
    interpreter's exit unless ``destroy`` (``--destroy-group``): runs of this stack under torchrun
    have been seen to die with SIGSEGV in its teardown, and fusiondiff writes the capture after the
    script returns, so a crash inside the script's own teardown would lose it; at exit it cannot."""
    torch.cuda.synchronize()
    dist.barrier()
    torch.cuda.synchronize()
    if destroy:
        dist.destroy_process_group()
    say(r.rank, f"the script is done (process group {'destroyed' if destroy else 'left to the exit'})")


def build_model(args: argparse.Namespace, r: Rank) -> Any:
    """A small litgpt model in bf16 on this rank's GPU, the same weights on every rank."""
    from litgpt import GPT, Config

    config = Config.from_name(args.model)
    config.n_layer, config.block_size = args.layers, args.block
    torch.manual_seed(0)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with r.device:
            model = GPT(config)
    finally:
        torch.set_default_dtype(previous)
    return model


def tokens(args: argparse.Namespace, model: Any, r: Rank) -> torch.Tensor:
    """The batch: the same token ids on every rank (seeded), planted at storage offset 1 on the rank
    named by ``--plant-offset-rank``."""
    generator = torch.Generator(device=r.device).manual_seed(1234)
    vocab = model.config.padded_vocab_size
    idx = torch.randint(0, vocab, (args.batch, args.block), device=r.device, generator=generator)
    if args.plant_offset_rank == r.rank:
        buffer = torch.empty(idx.numel() + 1, dtype=idx.dtype, device=r.device)
        buffer[1:].copy_(idx.flatten())
        idx = buffer[1:].view(args.batch, args.block)
        say(r.rank, f"planted: token ids at storage offset {idx.storage_offset()}")
    return idx


def plant_parameter(model: Any, r: Rank, args: argparse.Namespace) -> None:
    """Under DDP (parameters stay the module's own tensors): the embedding table becomes a view at
    storage offset 1 of a larger buffer on the planted rank, so the embedding's fusion reads a
    2-byte-aligned bf16 table. Done before DDP wraps the model (DDP broadcasts into it in place)."""
    if args.plant_offset_rank != r.rank:
        return
    wte = model.transformer.wte
    weight = wte.weight.detach()
    buffer = torch.empty(weight.numel() + 1, dtype=weight.dtype, device=weight.device)
    buffer[1:].copy_(weight.flatten())
    wte.weight = torch.nn.Parameter(buffer[1:].view_as(weight))
    say(r.rank, f"planted: embedding table at storage offset {wte.weight.storage_offset()}")


def train(
    step_model: Callable[[torch.Tensor], torch.Tensor], parameters: Any, idx: torch.Tensor, r: Rank, steps: int
) -> None:
    """``steps`` training steps: forward, cross-entropy against the inputs, backward, SGD."""
    optimizer = torch.optim.SGD(parameters, lr=1e-3)
    for step in range(steps):
        logits = step_model(idx)
        loss = torch.nn.functional.cross_entropy(logits.float().flatten(0, 1), idx.flatten())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        say(r.rank, f"step {step}: loss {loss.item():.4f}")


def report_thunderfx(compiled: Any, r: Rank) -> None:
    """Where thunderfx sent the graphs: how many Dynamo graphs, how many of their pieces Thunder
    took and how many went to inductor (or eager), why it split, and how many nvFusions Thunder's
    last traces hold. Zero nvFusions with Thunder pieces present would point at execution; zero
    Thunder pieces at the splitter."""
    backend = getattr(compiled, "_backend", None)
    infos = list(getattr(backend, "subgraph_infos", []) or [])
    thunder_parts = inductor_parts = 0
    reasons: list[str] = []
    for info in infos:
        split = getattr(info, "split_graph_module", None)
        names = [str(n.target) for n in split.graph.nodes if n.op == "call_module"] if split is not None else []
        thunder_parts += sum(1 for n in names if n.startswith("thunder_"))
        inductor_parts += sum(1 for n in names if n.startswith("inductor_"))
        reasons += [str(getattr(s, "info", s)) for s in getattr(info, "split_reasons", []) or []]
    say(
        r.rank,
        f"thunderfx: {len(infos)} Dynamo graph(s), {thunder_parts} Thunder piece(s), {inductor_parts} "
        f"inductor/eager piece(s), {len(reasons)} split reason(s)",
    )
    for reason in reasons[:5]:
        say(r.rank, f"  split: {reason[:200]}")
    try:
        forward = sum(_nvfusions(t) for t in compiled.last_traces)
        backward = sum(_nvfusions(t) for t in compiled.last_backward_traces)
        say(r.rank, f"thunderfx: nvFusions in the last traces: {forward} forward, {backward} backward")
    except Exception as exc:  # noqa: BLE001 - a diagnostic, never a reason to fail the run
        say(r.rank, f"thunderfx: last traces not readable ({type(exc).__name__}: {exc})")


def _nvfusions(trace: Any) -> int:
    return sum(1 for b in trace.bound_symbols if b.sym.name.startswith("nvFusion"))
