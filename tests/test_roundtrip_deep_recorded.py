"""The round trip of a 530-record training step, recorded on the H200 (tests/data/roundtrip_deep):
the deep Llama-style step of repro/roundtrip/deep_step.py (66 layers) captured live, its 12
distinct fusions replayed in fresh processes on one GPU. Here the round trip runs again on CPU with
those recorded replays standing in for the GPU work (``roundtrip(replay=...)``): every live record
is paired with its distinct fusion's replay, and the verdicts equal the ones the two-GPU run
computed on the GPU machine (``two_gpus_bench.json``)."""

from __future__ import annotations

import collections
import dataclasses
import gzip
import json
from pathlib import Path

from fusiondiff.roundtrip import render_summary, roundtrip
from fusiondiff.store import load_capture, write_capture

DATA = Path(__file__).parent / "data" / "roundtrip_deep"


def recorded_replay(merged_path: Path):
    """A replay function that writes, for each script, the fusion the GPU machine recorded for it
    (a merged replay names each fusion ``<script stem>:fusion0``)."""
    merged = load_capture(merged_path)

    def replay(scripts, output, device):
        stems = {Path(s).stem for s in scripts}
        fusions = tuple(f for f in merged.fusions if f.name.split(":")[0] in stems)
        assert len(fusions) == len(scripts), f"no recorded replay for {sorted(stems)}"
        write_capture(dataclasses.replace(merged, fusions=fusions, source=" ".join(scripts)), output)

    return replay


def test_the_530_record_step_round_trips_with_the_verdicts_of_the_two_gpu_run(tmp_path):
    live = tmp_path / "live.json"
    live.write_bytes(gzip.decompress((DATA / "live.json.gz").read_bytes()))
    result = roundtrip(live, tmp_path / "rt", devices=[None], replay=recorded_replay(DATA / "replay_one_gpu.json"))
    assert len(result.rows) == 530 and len(result.distinct) == 12
    assert result.isolation == "a fresh process per fusion"
    verdicts = {str(r.index): r.verdict for r in result.rows}
    two = json.loads((DATA / "two_gpus_bench.json").read_text())
    assert (two["records"], two["distinct"]) == (530, 12)
    assert verdicts == two["verdicts"], "one GPU and two GPUs gave the same verdict to every record"
    assert collections.Counter(verdicts.values()) == {"SAME": 464, "FASTER": 66}
    # the 66 FASTER are the records of one distinct forward fusion, replayed once
    faster = {r.replayed_as for r in result.rows if r.verdict == "FASTER"}
    assert len(faster) == 1
    assert len(result.processes) == 12 and {(p.device, p.scripts) for p in result.processes} == {(None, 1)}
    text = render_summary(result)
    assert "530 live fusion record(s), 12 distinct" in text
    assert "replay processes: 12, median" in text
    assert "verdicts: FASTER 66, SAME 464" in text
