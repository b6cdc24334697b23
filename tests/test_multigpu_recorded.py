"""Per-rank captures recorded on two H200s under torchrun (tests/data/multigpu, see its README):
every rank's fusions are kept in its own file on its own GPU, identical ranks are SAME, and the
rank whose input was planted at storage offset 1 is the straggler, with that cause first."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusiondiff.cli import main
from fusiondiff.diff.ranks import diff_ranks, load_rank_captures

DATA = Path(__file__).parent / "data" / "multigpu"
SESSIONS = {"ddp": 12, "ddp_first": 13, "fsdp": 7, "thunder_ddp": 48, "planted": 12}


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


@pytest.mark.parametrize("session", ["ddp", "ddp_first", "fsdp", "thunder_ddp"])
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
