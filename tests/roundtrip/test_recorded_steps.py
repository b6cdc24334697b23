"""Round trips of whole training steps recorded on the H200, run again on CPU.

tests/data/roundtrip_deep: the round trip of a 530-record training step:
the deep Llama-style step of repro/roundtrip/deep_step.py (66 layers) captured live, its 12
distinct fusions replayed in fresh processes on one GPU. Here the round trip runs again on CPU with
those recorded replays standing in for the GPU work (``roundtrip(replay=...)``): every live record
is paired with its distinct fusion's replay, and the verdicts equal the ones the two-GPU run
computed on the GPU machine (``two_gpus_bench.json``). ``same_machine/`` holds both halves of the
benchmark run again on one x2 machine, one after the other: their verdicts and process counts."""

from __future__ import annotations

import collections
import dataclasses
import gzip
import json
import re
from collections import Counter
from pathlib import Path

from fusiondiff.io.store import load_capture, write_capture
from fusiondiff.roundtrip import render_summary, roundtrip

DATA = Path(__file__).parent.parent / "data" / "roundtrip_deep"
GEMMA = Path(__file__).parent.parent / "data" / "roundtrip_gemma"


def recorded_replay(merged_path: Path):
    """A replay function that writes, for each script, the fusion the GPU machine recorded for it
    (a merged replay names each fusion ``<script stem>:fusion0``; a replay process of one script
    names it ``fusion0``, and the round trip adds the stem again)."""
    merged = load_capture(merged_path)

    def replay(scripts, output, device):
        stems = {Path(s).stem for s in scripts}
        fusions = tuple(
            dataclasses.replace(f, name=f.name.partition(":")[2])
            for f in merged.fusions
            if f.name.partition(":")[0] in stems
        )
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
    merged = load_capture(tmp_path / "rt" / "replay.json")
    assert {f.name for f in merged.fusions} == {f.name for f in load_capture(DATA / "replay_one_gpu.json").fusions}


def test_both_halves_on_one_machine_gave_one_verdict_per_record_and_used_both_gpus():
    """bench_roundtrip.py --half both on the x2 kind: the one-GPU and two-GPU runs one after the other."""
    one = json.loads((DATA / "same_machine" / "one_gpu_bench.json").read_text())
    two = json.loads((DATA / "same_machine" / "two_gpus_bench.json").read_text())
    earlier = json.loads((DATA / "two_gpus_bench.json").read_text())
    assert one["verdicts"] == two["verdicts"] == earlier["verdicts"]
    assert (one["records"], one["distinct"]) == (two["records"], two["distinct"]) == (530, 12)
    assert {device for device, _, _ in one["process_s"]} == {"0"}
    assert {device for device, _, _ in two["process_s"]} == {"0", "1"}
    assert len(one["process_s"]) == len(two["process_s"]) == 12
    ratio = two["wall_s"] / one["wall_s"]
    assert ratio <= 0.6, f"two GPUs took {ratio:.2f}x of one"
    log = (DATA / "same_machine" / "bench.log").read_text()
    assert f"({ratio:.2f}x of one GPU; target <= 0.6)" in log


def test_starting_processes_ahead_halved_the_wall_time_and_changed_no_replayed_median_by_more_than_one_percent():
    """bench_roundtrip.py --half both --compare-prestart on the x2 kind (prestart/): one GPU with
    every process started in its turn, then started ahead, then two GPUs started ahead."""
    folder = DATA / "prestart"
    in_turn = json.loads((folder / "one_gpu_in_turn_bench.json").read_text())
    ahead = json.loads((folder / "one_gpu_bench.json").read_text())
    two = json.loads((folder / "two_gpus_bench.json").read_text())
    earlier = json.loads((DATA / "two_gpus_bench.json").read_text())
    assert (in_turn["started_ahead"], ahead["started_ahead"], two["started_ahead"]) == (False, True, True)
    assert in_turn["verdicts"] == ahead["verdicts"] == two["verdicts"] == earlier["verdicts"]
    assert ahead["wall_s"] / in_turn["wall_s"] < 0.55
    ratios = [ahead["replay_median_ns"][i] / m for i, m in in_turn["replay_median_ns"].items()]
    assert len(ratios) == 12 and max(abs(r - 1) for r in ratios) < 0.01
    assert two["wall_s"] / ahead["wall_s"] <= 0.6
    log = (folder / "bench.log").read_text()
    assert f"({two['wall_s'] / ahead['wall_s']:.2f}x of one GPU; target <= 0.6)" in log
    assert "same verdicts in turn and ahead: yes" in log and "same verdicts: yes" in log


def test_a_gemma_2_step_of_544_records_round_trips_as_it_did_on_the_gpu(tmp_path):
    """A model that is in no fixture of this repo: litgpt's gemma-2-2b (2 layers, block 512, batch 2,
    two training steps) under thunderfx, 544 fusion records of 27 distinct fusions; each replayed in
    a fresh process on one H200, every record SAME (roundtrip.log)."""
    live = tmp_path / "live.json"
    live.write_bytes(gzip.decompress((GEMMA / "live.json.gz").read_bytes()))
    replay_path = tmp_path / "replay.json"
    replay_path.write_bytes(gzip.decompress((GEMMA / "replay.json.gz").read_bytes()))
    capture = load_capture(live)
    assert "--model gemma-2-2b" in capture.source and capture.environment.gpu_name == "NVIDIA H200"
    result = roundtrip(live, tmp_path / "rt", devices=[None], replay=recorded_replay(replay_path))
    assert len(result.rows) == 544 and len(result.distinct) == 27
    assert collections.Counter(r.verdict for r in result.rows) == {"SAME": 544}
    text = render_summary(result)
    log = (GEMMA / "roundtrip.log").read_text()
    # the step's totals computed here are the ones the GPU machine printed (in us, then)
    printed = re.search(r"records with a replay \(544\): live ([0-9.]+) us, replayed ([0-9.]+) us \(1\.01x\)", log)
    assert printed is not None
    live_ns, replay_ns, count = result.compared_totals_ns
    assert count == 544 and (round(live_ns / 1000, 2), round(replay_ns / 1000, 2)) == tuple(
        map(float, printed.groups())
    )
    assert "records with a replay (544): live 4.05 ms, replayed 4.08 ms (1.01x)" in text
    assert "544 live fusion record(s), 27 distinct" in text and "544 live fusion record(s), 27 distinct" in log


def test_plain_diff_of_a_step_against_its_round_trip_counts_the_records_each_replay_stands_for(tmp_path):
    """``fusiondiff diff live.json rt/replay.json``: the merged replay stands for every record of each
    distinct fusion it replayed. Issue #41: it said "518 not replayed" of 530 records, though the
    round trip had compared them all; now they are counted, and only the records of a distinct
    fusion without a replay are not replayed (named, 40 at most, with where the rest are)."""
    import dataclasses

    from fusiondiff.front.api import diff_files
    from fusiondiff.io.store import load_capture, save_capture
    from fusiondiff.report.formats.diff_text import MAX_UNMATCHED, render_diff_text

    live = tmp_path / "live.json"
    live.write_bytes(gzip.decompress((DATA / "live.json.gz").read_bytes()))
    # the merged replay written now, so its source is in the round trip's current words
    roundtrip(live, tmp_path / "rt", devices=[None], replay=recorded_replay(DATA / "replay_one_gpu.json"))
    result = diff_files(str(live), str(tmp_path / "rt" / "replay.json"))
    assert (len(result.pairs), len(result.represented), len(result.not_replayed), len(result.missing)) == (
        12,
        518,
        0,
        0,
    )
    text = render_diff_text(result)
    assert "(B, a round trip's merged replay, replays 12 distinct fusion(s) for 530 of A's records)" in text
    assert "not replayed" not in text
    assert result.exit_code() == diff_files(str(live), str(DATA / "replay_one_gpu.json")).exit_code()
    # a distinct fusion whose replay is gone: its records, and only they, are not replayed
    merged, capture = load_capture(tmp_path / "rt" / "replay.json"), load_capture(live)
    records = Counter(f.replay_key for f in capture.fusions)
    largest = max(result.pairs, key=lambda p: records[capture.fusions[p.index_a].replay_key])
    gone, key = largest.index_b, capture.fusions[largest.index_a].replay_key
    partial = save_capture(
        dataclasses.replace(merged, fusions=tuple(f for i, f in enumerate(merged.fusions) if i != gone)),
        tmp_path / "partial.json",
    )
    lacking = diff_files(str(live), str(partial))
    assert len(lacking.not_replayed) == records[key] > MAX_UNMATCHED
    assert len(lacking.represented) == 530 - 11 - len(lacking.not_replayed)
    text = render_diff_text(lacking)
    assert f"{len(lacking.not_replayed)} not replayed)" in text
    assert "`fusiondiff roundtrip` pairs every live record with its distinct fusion's replay" in text
