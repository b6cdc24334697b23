"""``fusiondiff ranks``: the per-rank captures of one session, compared with rank 0.

The ranks are built in code from the Pythia capture recorded on an H200 (tests/data/fidelity):
rank 0 is that capture as recorded; the other ranks are SYNTHETIC copies, changed here as a
second GPU of a torchrun session would differ, with each change stated where it is made. No
capture here was recorded under torchrun.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from fusiondiff.diff.ranks import RankCapture, diff_ranks
from fusiondiff.front.api import load_rank_captures
from fusiondiff.front.cli import main
from fusiondiff.io.store import dumps_capture, load_capture
from fusiondiff.records.errors import DiffError
from fusiondiff.records.model import Capture, FusionRecord, Timing

PYTHIA = Path(__file__).parent.parent / "data" / "fidelity" / "pythia" / "live.json"


def _as_rank(capture: Capture, rank: int, world: int = 3) -> Capture:
    """The capture as rank ``rank`` would record it: rank fields set, every fusion and input on
    ``cuda:<rank>`` (its own GPU, which is not a difference)."""
    environment = dataclasses.replace(
        capture.environment,
        rank=rank,
        local_rank=rank,
        world_size=world,
        cuda_device_index=rank,
        distributed_backend="nccl",
        hostname="node0",
    )
    fusions = tuple(
        dataclasses.replace(
            f,
            device_index=rank,
            inputs=tuple(dataclasses.replace(t, device=f"cuda:{rank}") if t.kind == "tensor" else t for t in f.inputs),
        )
        for f in capture.fusions
    )
    return dataclasses.replace(capture, environment=environment, fusions=fusions)


def _scaled(timing: Timing, factor: float) -> Timing:
    return Timing(samples_ns=tuple(s * factor for s in timing.samples_ns))


def _slowed(f: FusionRecord, factor: float, **launch: object) -> FusionRecord:
    kernels = tuple(
        dataclasses.replace(k, timing=_scaled(k.timing, factor), launch=dataclasses.replace(k.launch, **launch))
        for k in f.kernels
    )
    return dataclasses.replace(f, kernels=kernels, timing=_scaled(f.timing, factor))


def _planted_offset(capture: Capture, name: str) -> Capture:
    """SYNTHETIC: fusion ``name``'s first input at storage offset 1 (2-byte aligned for bf16), its
    kernel launched with another block, and its samples 1.6x longer."""
    fusions = []
    for f in capture.fusions:
        if f.name == name and f.trace == "forward":
            first = dataclasses.replace(f.inputs[0], storage_offset=1, alignment_bytes=2, is_contiguous=True)
            f = _slowed(dataclasses.replace(f, inputs=(first, *f.inputs[1:])), 1.6, block=(128, 1, 1))
        fusions.append(f)
    return dataclasses.replace(capture, fusions=tuple(fusions))


def _planted_clocks(capture: Capture, name: str) -> Capture:
    """SYNTHETIC: fusion ``name`` 1.1x longer, every fusion timed at a lower SM clock."""
    fusions = tuple(
        dataclasses.replace(
            _slowed(f, 1.1) if f.name == name and f.trace == "forward" else f,
            sm_clock_mhz=(1500, 1500),
        )
        for f in capture.fusions
    )
    return dataclasses.replace(capture, fusions=fusions)


@pytest.fixture
def recorded() -> Capture:
    return load_capture(PYTHIA)


def _write(folder: Path, captures: list[Capture]) -> None:
    for rank, capture in enumerate(captures):
        (folder / f"live.rank{rank}.json").write_text(dumps_capture(capture))


def test_planted_per_rank_cause_is_found_and_ranked_first(recorded, tmp_path, capsys):
    _write(
        tmp_path,
        [
            _as_rank(recorded, 0),
            _as_rank(_planted_offset(recorded, "nvFusion2"), 1),
            _as_rank(_planted_clocks(recorded, "nvFusion4"), 2),
        ],
    )
    result = diff_ranks(load_rank_captures([tmp_path]))
    assert [c.rank for c in result.comparisons] == [1, 2]
    assert [c.rank for c in result.stragglers] == [1, 2], "rank 1's gap (1.6x of 9 us) exceeds rank 2's"
    rank1 = result.stragglers[0].result
    assert rank1.findings[0].rule == "storage_offset"
    assert rank1.findings[0].fusions == ("nvFusion2 [forward]",)
    assert {p.label for p in rank1.pairs if p.timing.verdict != "SAME"} == {"nvFusion2 [forward]"}
    # each rank on its own GPU: neither its device nor its rank fields are differences
    fusion_changes = [ch.path for rc in result.comparisons for p in rc.result.pairs for ch in p.changes]
    assert "inputs[0].storage_offset" in fusion_changes
    assert "device_index" not in fusion_changes
    assert not [ch for rc in result.comparisons for ch in rc.result.changes if ch.category == "environment"]
    assert all(p.matched_by == "definition_and_inputs" for p in result.comparisons[1].result.pairs)
    assert {f.rule for f in result.stragglers[1].result.findings} >= {"clocks"}

    assert main(["ranks", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    stragglers = out[out.index("stragglers") :]
    assert stragglers.index("rank 1:") < stragglers.index("rank 2:")
    assert "storage_offset" in stragglers.split("rank 2:")[0]


def test_same_capture_on_every_rank_is_same(recorded, tmp_path, capsys):
    _write(tmp_path, [_as_rank(recorded, 0, world=2), _as_rank(recorded, 1, world=2)])
    assert main(["ranks", str(tmp_path / "live.rank0.json"), str(tmp_path / "live.rank1.json")]) == 0
    out = " ".join(capsys.readouterr().out.split())  # wrapped to 100 columns: read line breaks as spaces
    assert "rank 1: same speed" in out
    assert "recorded properties identical" in out
    assert "no straggler" in out


def test_ranks_sharing_one_gpu_are_reported(recorded):
    ranks = [RankCapture(r, f"r{r}.json", _as_rank(recorded, 0, world=2)) for r in (0, 1)]
    ranks[1] = dataclasses.replace(
        ranks[1],
        capture=dataclasses.replace(
            ranks[1].capture, environment=dataclasses.replace(ranks[1].capture.environment, rank=1)
        ),
    )
    result = diff_ranks(ranks)
    assert result.comparisons[0].placement == ("shares cuda:0 of node0 with rank 0",)


def test_rank_given_twice_or_alone_is_an_error(recorded, tmp_path, capsys):
    _write(tmp_path, [_as_rank(recorded, 0, world=2)])
    with pytest.raises(DiffError, match="two or more"):
        load_rank_captures([tmp_path])
    copy = tmp_path / "other.json"
    copy.write_text(json.dumps(json.loads(dumps_capture(_as_rank(recorded, 0, world=2)))))
    assert main(["ranks", str(tmp_path / "live.rank0.json"), str(copy)]) == 2
    assert "rank 0 is given twice" in capsys.readouterr().err
