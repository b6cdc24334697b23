"""The round trip of a torchrun session's per-rank captures, without a GPU (issue #17).

The ranks are built in code from the Pythia training step recorded on an H200
(tests/data/fidelity/pythia), as tests/diff/test_ranks.py builds them: rank 0 is the recorded capture,
rank 1 a SYNTHETIC copy on cuda:1 whose forward nvFusion2 has its first input at storage offset 1.
The replays are the recorded H200 replay of each fusion; for the planted fusion, the replay is the
recorded one with the same plant (SYNTHETIC: what a faithful repro of that input would run).
"""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path

import pytest

from fusiondiff import roundtrip as rt
from fusiondiff.front.cli import main
from fusiondiff.io.store import dumps_capture, load_capture, save_capture
from fusiondiff.records.errors import FusionDiffError
from fusiondiff.records.model import Capture, FusionRecord
from fusiondiff.roundtrip.sources import load_live_sources

from diff.test_ranks import _as_rank, _planted_offset, _slowed

PYTHIA = Path(__file__).parent.parent / "data" / "fidelity" / "pythia"


class RecordedReplay:
    """Writes, for each script, the recorded replay of the live fusion its repro was written for
    (by the combined capture's position in the script's name); a fusion planted at offset 1 gets
    the recorded replay with the same plant."""

    def __init__(self, live: Capture):
        self.live = live
        self.recorded = load_capture(PYTHIA / "replay.json")
        self.calls: list[tuple[str | None, tuple[str, ...]]] = []
        self.lock = threading.Lock()

    def _replay_of(self, f: FusionRecord) -> FusionRecord:
        recorded = next(r for r in self.recorded.fusions if r.name.startswith(f"{f.trace}_{f.name}:"))
        if f.inputs[0].storage_offset == 1:
            first = dataclasses.replace(recorded.inputs[0], storage_offset=1, alignment_bytes=2, is_contiguous=True)
            recorded = _slowed(
                dataclasses.replace(recorded, inputs=(first, *recorded.inputs[1:])), 1.6, block=(128, 1, 1)
            )
        return recorded

    def __call__(self, scripts, output: Path, device):  # noqa: ANN001
        stems = tuple(Path(s).stem for s in scripts)
        with self.lock:
            self.calls.append((device, stems))
        fusions = []
        for stem in stems:
            f = self.live.fusions[int(stem.split("_", 1)[0])]
            name = "fusion0" if len(stems) == 1 else f"{stem}:fusion0"
            fusions.append(dataclasses.replace(self._replay_of(f), name=name))
        save_capture(dataclasses.replace(self.recorded, fusions=tuple(fusions), source=" ".join(scripts)), output)

    @property
    def stems(self) -> list[str]:
        return [s for _, stems in self.calls for s in stems]


@pytest.fixture
def session(tmp_path: Path) -> Path:
    """A folder with live.rank0.json (as recorded) and live.rank1.json (planted, on cuda:1)."""
    recorded = load_capture(PYTHIA / "live.json")
    folder = tmp_path / "session"
    folder.mkdir()
    ranks = [_as_rank(recorded, 0, world=2), _as_rank(_planted_offset(recorded, "nvFusion2"), 1, world=2)]
    for rank, capture in enumerate(ranks):
        (folder / f"live.rank{rank}.json").write_text(dumps_capture(capture))
    return folder


def _combined(*items: Path) -> Capture:
    return rt.combine_ranks(load_live_sources(list(items)))


def test_fusions_every_rank_ran_alike_are_replayed_once(session: Path, tmp_path: Path) -> None:
    live = _combined(session)
    assert len(live.fusions) == 24
    assert {f.device_index for f in live.fusions} == {0}, "rank 1's own cuda:1 is described as rank 0's"
    fake = RecordedReplay(live)
    result = rt.roundtrip(session, tmp_path / "rt", replay=fake, devices=["0", "1"])
    # pythia has 11 distinct fusions; rank 1's offset nvFusion2 is a 12th, replayed from rank 1's record
    assert len(result.distinct) == 12
    assert sorted(fake.stems) == sorted(d.stem for d in result.distinct)
    assert [s for s in fake.stems if "rank1" in s] == ["0014_rank1_forward_nvFusion2"]
    assert {device for device, _ in fake.calls} <= {"0", "1"}
    # every record of both ranks has a row, with its rank and its position in its own file
    assert len(result.rows) == 24
    rank1 = sorted((r for r in result.rows if r.rank == 1), key=lambda r: r.index)
    assert [r.rank_index for r in rank1] == list(range(12))
    planted = next(r for r in rank1 if r.rank_index == 2)
    assert planted.replayed_as == planted.index and planted.note == ""
    other = next(r for r in rank1 if r.rank_index == 0)
    assert other.note == "replay of rank 0 #0"
    # the faithful replay of the planted input runs as slowly as rank 1 did: every row SAME
    assert {r.verdict for r in result.rows} == {"SAME"}
    assert result.exit_code == 0
    rows = {row.rank: row for row in result.rank_rows}
    assert (rows[0].records, rows[0].replayed_here, rows[0].replayed_from_other_rank) == (12, 11, 0)
    assert (rows[1].records, rows[1].replayed_here, rows[1].replayed_from_other_rank) == (12, 1, 11)
    assert rows[1].live_total_ns > rows[0].live_total_ns  # the planted fusion is 1.6x slower
    # the diff record names each live fusion with its rank
    record = json.loads((tmp_path / "rt" / "diff.json").read_text())
    labels = {p["label"].split(" vs ")[0] for p in record["diff"]["pairs"]}
    assert "rank1:nvFusion2 [forward]" in labels and "rank0:nvFusion2 [forward]" in labels
    text = rt.render_summary(result)
    assert "24 live fusion record(s), 12 distinct" in text
    assert "per rank" in text and "r1#2" in text


def test_a_rank_file_alone_is_compared_on_its_own_device(session: Path, tmp_path: Path) -> None:
    """Rank 1's capture alone: its repros pin cuda:1 (the replay child moves them to the worker's
    GPU), and the replay on cuda:0 is not reported as another device."""
    rank1 = session / "live.rank1.json"
    fake = RecordedReplay(_combined(rank1))
    result = rt.roundtrip(rank1, tmp_path / "rt", replay=fake, devices=[None])
    assert len(result.distinct) == 11 and not result.rank_rows
    script = (tmp_path / "rt" / "scripts" / f"{result.distinct[0].stem}.py").read_text()
    assert "'cuda:1'" in script
    record = json.loads((tmp_path / "rt" / "diff.json").read_text())
    changes = [c for p in record["diff"]["pairs"] for c in p["changes"]]
    assert not [c for c in changes if c["path"] == "device_index"]
    assert result.exit_code == 0


def test_the_command_line_takes_rank_files_or_their_folder(session: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    made: list[RecordedReplay] = []

    def fake_child(options=None, timeout_s=900.0, token=None, gate="gpu", forked=False, relay=None):  # noqa: ANN001, ANN202
        made.append(RecordedReplay(_combined(session)))
        return made[-1]

    monkeypatch.setattr(rt.run, "replay_in_child", fake_child)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,5")
    files = [str(session / "live.rank0.json"), str(session / "live.rank1.json")]
    assert main(["roundtrip", *files, "-o", str(tmp_path / "a"), "--device", "1"]) == 0
    assert {device for device, _ in made[-1].calls} == {"5"}
    out = capsys.readouterr().out
    assert "round trip of live.rank0.json + live.rank1.json" in out and "per rank" in out
    assert main(["roundtrip", str(session), "-o", str(tmp_path / "b")]) == 0
    assert {device for device, _ in made[-1].calls} <= {"4", "5"}
    assert main(["roundtrip", str(session), "-o", str(tmp_path / "c"), "--device", "2"]) == 2
    assert "--device 2: the visible GPUs are 0-1" in capsys.readouterr().err


def test_ranks_given_twice_or_nameless_are_refused(session: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.json"
    copy.write_text((session / "live.rank1.json").read_text())
    with pytest.raises(FusionDiffError, match="rank 1 is given twice"):
        load_live_sources([session, copy])
    plain = tmp_path / "plain.json"
    plain.write_text((PYTHIA / "live.json").read_text())
    with pytest.raises(FusionDiffError, match="no rank recorded and none in its name"):
        load_live_sources([session / "live.rank0.json", plain])
    assert [s.rank for s in load_live_sources(plain)] == [None]


def test_device_choice_among_the_visible_gpus() -> None:
    assert rt.choose_devices([1, 0, 1], ["2", "3"]) == ["3", "2"]
    with pytest.raises(FusionDiffError, match="no GPU is visible"):
        rt.choose_devices([0], [None])
