"""A side timed in several processes (``replay --processes``, ``diff --also-a/--also-b``): its
fusions pooled by identity, and judged against the spread measured between its processes, on the
H100 recordings of one program in five processes a side and of one region replayed five times."""

from __future__ import annotations

from pathlib import Path

from fusiondiff.diff import diff
from fusiondiff.io.store import load_capture
from fusiondiff.records.processes import pool
from tests.inprocess import fusiondiff

DATA = Path(__file__).resolve().parent.parent / "data" / "h100"
NOISE = DATA / "noise"
THUNDER = DATA / "thunder_report"
LIVE = [NOISE / f"live_{k}.json" for k in range(1, 6)]
REPLAYS = [NOISE / f"replay_{k}.json" for k in range(1, 6)]
REGION = [THUNDER / "replays" / f"{k}.json" for k in (1, 2, 3)] + [THUNDER / "replay_repros.json"]


def _also(flag: str, paths: list[Path]) -> list[str]:
    return [part for path in paths for part in (flag, str(path))]


def test_pooling_joins_each_fusion_with_its_twin_in_every_other_process():
    first, others = load_capture(LIVE[0]), [load_capture(p) for p in LIVE[1:]]
    pooled = pool(first, others)
    assert pooled.processes == 5 and pooled.unmatched == 0
    for record, *twins in zip(pooled.capture.fusions, *(o.fusions for o in others)):
        assert [t.samples_ns for t in record.other_process_timings] == [t.timing.samples_ns for t in twins]
        assert record.timing == first.fusions[pooled.capture.fusions.index(record)].timing


def test_records_of_another_program_join_nothing_and_are_counted():
    other = load_capture(THUNDER / "live.json")
    pooled = pool(load_capture(LIVE[0]), [other])
    assert pooled.unmatched == len(other.fusions)
    assert all(not f.other_process_timings for f in pooled.capture.fusions)


def test_five_live_processes_against_five_replays_are_the_same_program_judged_on_their_spread():
    a = pool(load_capture(LIVE[0]), [load_capture(p) for p in LIVE[1:]]).capture
    b = pool(load_capture(REPLAYS[0]), [load_capture(p) for p in REPLAYS[1:]]).capture
    for first, second in ((a, b), (b, a)):
        result = diff(first, second)
        timed = [p.timing for p in result.pairs]
        assert timed and all(t.spread == "measured" and t.processes_a == 5 and t.processes_b == 5 for t in timed)
        assert {t.verdict for t in timed} == {"SAME"}
        assert result.exit_code() == 0


def test_the_cli_pools_each_side_and_says_so():
    run = fusiondiff("diff", LIVE[0], REPLAYS[0], *_also("--also-a", LIVE[1:]), *_also("--also-b", REPLAYS[1:]))
    assert run.returncode == 0, run.stdout + run.stderr
    said = " ".join(run.stderr.split())  # a note may be wrapped to the width
    assert "A pooled from 5 processes" in said and "B pooled from 5 processes" in said
    assert "kernel: same speed" in run.stdout


def test_a_planted_offset_stays_first_against_the_replays_own_measured_spread():
    """The region of tests/data/h100/thunder_report live at storage offset 1, against Thunder's
    scripts replayed in five processes (offset 0): B's spread is measured, A's calibrated."""
    run = fusiondiff("diff", THUNDER / "live.json", THUNDER / "replay_report.json", *_also("--also-b", REGION))
    assert run.returncode == 1, run.stdout + run.stderr
    text = " ".join(run.stdout.split())
    assert "measured in 5 processes of B" in text and "calibrated for A" in text
    assert "1. [storage_offset, cause]" in text and "FASTER" in text


def test_a_missing_capture_to_pool_is_a_one_line_error():
    run = fusiondiff("diff", LIVE[0], REPLAYS[0], "--also-b", str(NOISE / "no_such.json"))
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1 and "no_such.json" in run.stderr


def test_replay_processes_needs_fresh_processes_of_one_timer(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("pass\n")
    run = fusiondiff("replay", script, "-o", tmp_path / "r.json", "--processes", "3", "--in-process")
    assert run.returncode == 2 and "--processes" in run.stderr and not (tmp_path / "r.json").exists()
    run = fusiondiff("replay", script, "-o", tmp_path / "r.json", "--processes", "0")
    assert run.returncode == 2 and "out of range" in run.stderr
