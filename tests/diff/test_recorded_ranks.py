"""Per-rank captures recorded on two H200s under torchrun (tests/data/multigpu, see its README):
every rank's fusions are kept in its own file on its own GPU, identical ranks are SAME, and the
rank whose input was planted at storage offset 1 is the straggler, with that cause first."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusiondiff.diff.ranks import diff_ranks
from fusiondiff.front.api import load_rank_captures
from fusiondiff.front.cli import main

DATA = Path(__file__).parent.parent / "data" / "multigpu"
SESSIONS = {"ddp": 12, "ddp_first": 13, "fsdp": 7, "thunder_ddp": 48, "thunder_fsdp": 53, "planted": 12}
WITH_COLLECTIVES = ("ddp", "thunder_fsdp")
"""Recorded after the communication trace was built: their rank files hold the session's collectives."""


@pytest.mark.parametrize("session", sorted(SESSIONS))
def test_each_rank_recorded_its_own_fusions_on_its_own_gpu(session):
    ranks = load_rank_captures([DATA / session])
    assert [r.rank for r in ranks] == [0, 1]
    for rank in ranks:
        env = rank.capture.environment
        assert (env.rank, env.world_size, env.cuda_device_index, env.distributed_backend) == (
            rank.rank,
            2,
            rank.rank,
            "nccl",
        )
        assert len(rank.capture.fusions) == SESSIONS[session]
        assert {f.device_index for f in rank.capture.fusions} == {rank.rank}
        assert all(f.timing.count == 30 for f in rank.capture.fusions), "every fusion timed"


@pytest.mark.parametrize("session", ["ddp", "ddp_first", "fsdp", "thunder_ddp", "thunder_fsdp"])
def test_ranks_that_ran_alike_are_same_with_exit_0(session, capsys):
    assert main(["ranks", str(DATA / session)]) == 0
    out = capsys.readouterr().out
    assert "same speed" in out and "no straggler" in out


def test_planted_offset_rank_is_the_straggler_with_that_cause_first(capsys):
    result = diff_ranks(load_rank_captures([DATA / "planted"]))
    assert main(["ranks", str(DATA / "planted")]) == 1
    out = capsys.readouterr().out
    assert "top finding: [storage_offset, cause] Input 0 of nvFusion0 [forward]" in out
    (straggler,) = result.stragglers
    assert straggler.rank == 1 and straggler.gap_ns > 0
    slower = [p for p in straggler.result.pairs if p.timing.verdict == "SLOWER"]
    assert len(slower) == 1 and slower[0].label.startswith("nvFusion0 [forward]")
    assert straggler.result.findings[0].rule == "storage_offset"


@pytest.mark.parametrize("session", WITH_COLLECTIVES)
def test_each_rank_recorded_the_same_collectives_apart_from_its_fusions(session):
    ranks = load_rank_captures([DATA / session])
    per_rank = []
    for rank in ranks:
        kernels = rank.capture.communication
        assert kernels, f"rank {rank.rank} recorded no collective"
        assert all(k.name.startswith("ncclDevKernel_") for k in kernels)
        assert all(k.calls == len(k.samples_ns) and k.total_ns >= sum(k.samples_ns) * (1 - 1e-9) for k in kernels)
        # kept apart: no fusion's kernels or time hold a collective
        assert not [k.name for f in rank.capture.fusions for k in f.kernels if k.name.startswith("ncclDevKernel")]
        assert rank.capture.communication_ns > 0 and rank.capture.fusion_time_ns > 0
        per_rank.append({k.name: k.calls for k in kernels})
    assert per_rank[0] == per_rank[1], "both ranks take part in every collective"


def test_thunder_fsdp_collectives_are_its_all_gathers_and_reduce_scatters():
    (rank0, _) = load_rank_captures([DATA / "thunder_fsdp"])
    calls = {k.name: k.calls for k in rank0.capture.communication}
    assert calls["ncclDevKernel_AllGather_RING_LL"] == calls["ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL"] > 0


def test_ranks_prints_each_ranks_collectives_and_the_waiting_caveat(capsys):
    assert main(["ranks", str(DATA / "thunder_fsdp")]) == 0
    out = capsys.readouterr().out
    assert "communication kernels per rank (kept apart from fusion time" in out
    assert "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL" in out
    # rank 0 spent about 2.0 s in collectives across the block, rank 1 about 0.33 s (compilation
    # skew included): reported as waiting, not as a straggler
    assert "time in collectives differs by" in out and "no straggler" in out
