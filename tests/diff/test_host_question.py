"""The host question judged between processes (fusiondiff.diff.host_stats, rules_host): not judged
on too few samples, a gap within what two processes differ by is SAME, a call that waits for its
kernels is named as such, and the host line names the side its own finding names.

The recordings in tests/data hold four fd.execute warm-ups a record; where a test needs enough
samples it diffs copies with the recorded host times repeated (tests/host_copies.py) and says so.
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
from pathlib import Path

import pytest
from host_copies import with_host_samples

from fusiondiff.diff.core import diff
from fusiondiff.diff.host_stats import HOST_FLOOR_RATIO, HOST_MIN_SAMPLES, compare_hosts
from fusiondiff.front.api import diff_files
from fusiondiff.front.cli import main
from fusiondiff.io.store import load_capture
from fusiondiff.records.model import Capture, Timing
from fusiondiff.report.words import wording
from fusiondiff.report.words.questions import host_line

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
PHI2 = DATA / "roundtrip_modes" / "fifth_round" / "sessions" / "phi2"


def _spread(median: float, n: int, step: float = 0.01) -> Timing:
    """``n`` host samples around ``median``, each ``step`` of it apart: a tight, tie-free spread."""
    return Timing(tuple(median * (1 + step * (i - n // 2) / n) for i in range(n)))


def test_too_few_host_samples_are_not_measured_not_confirmed():
    # phi-2's nvFusion4 replayed in two processes: 136.0 against 80.5 us from four warm-ups each,
    # which the kernel statistics' few-sample rule confirmed (1.69x, no overlap)
    a = load_capture(PHI2 / "forked_turn" / "logs" / "0004_backward_nvFusion4.json")
    b = load_capture(PHI2 / "reference" / "logs" / "0004_backward_nvFusion4.json")
    result = diff(a, b)
    (pair,) = result.pairs
    assert pair.host is not None and pair.host.verdict == "NOT MEASURED"
    assert (pair.host.count_a, pair.host.count_b) == (4, 4)
    assert not result.judged("host") and result.findings_of("host") == ()
    assert host_line(result).startswith("not judged: fd.execute timed 4 vs 4 times a side")
    # the same figures with the samples a capture takes now: 1.69x is within the between-process floor
    judged = diff(with_host_samples(a, repeat=11), with_host_samples(b, repeat=11))
    assert judged.pairs[0].host.verdict == "SAME" and judged.judged("host") and judged.passes("host")


def test_a_gap_beyond_the_floor_and_confirmed_by_the_samples_differs():
    n = HOST_MIN_SAMPLES
    same, slower, few = compare_hosts(
        [
            (_spread(20_000.0, 44), _spread(30_000.0, 44)),  # 1.5x: the U test says p < 1e-10, the floor SAME
            (_spread(20_000.0, 44), _spread(20_000.0 * HOST_FLOOR_RATIO * 1.05, 44)),
            (_spread(20_000.0, n - 1), _spread(200_000.0, n - 1)),  # 10x, but too few samples
        ]
    )
    assert same.verdict == "SAME" and "within what two processes" in same.reason
    assert slower.verdict == "SLOWER"
    assert few.verdict == "NOT MEASURED" and few.p_value is None


def _same_program(prefix: str) -> list[list[Path]]:
    """The same-program groups of ``benchmarks/check_same_program.py`` under ``prefix`` of tests/data."""
    sys.path.insert(0, str(ROOT))
    from benchmarks.check_same_program import same_program_groups

    return [paths for name, paths in same_program_groups().items() if name.startswith(prefix)]


def _aa_pairs() -> list[tuple[Path, Path]]:
    """Every ordered pair of two replays of one record in tests/data/roundtrip_modes."""
    return [pair for paths in _same_program("roundtrip_modes/") for pair in itertools.permutations(paths, 2)]


def _noise_pairs() -> list[tuple[Path, Path]]:
    """Every ordered pair of tests/data/h100/noise's live captures, and of its replays."""
    (paths,) = _same_program("h100/noise")
    return [
        pair
        for kind in ("live_", "replay_")
        for pair in itertools.permutations([p for p in paths if p.name.startswith(kind)], 2)
    ]


def test_the_same_script_replayed_twice_never_fails_the_host_gate_on_host_time():
    """Every ordered pair of two replays of one record (tests/data/roundtrip_modes: 158, of which
    --gate host failed 34 before, 18 of them on host time alone): the host gate fails only where
    the kernel gate does, and every host question is not judged (four warm-ups a side): a gate
    asked for on it exits 3 where the kernel question passes, never 1."""
    pairs = _aa_pairs()
    assert len(pairs) == 158
    captures = {path: load_capture(path) for pair in pairs for path in pair}
    host_only = []
    for path_a, path_b in pairs:
        result = diff(captures[path_a], captures[path_b])
        assert not result.judged("host") and result.findings_of("host") == ()
        assert result.outcome("host") == "not measured"
        if result.exit_code(gates=("host",)) != {0: 3}.get(result.exit_code(), result.exit_code()):
            host_only.append((path_a, path_b))
    assert host_only == []


def test_one_program_in_separate_processes_never_fails_the_host_gate():
    """tests/data/h100/noise: one training step captured live in five processes and replayed five
    times on the H100, 44 host samples a record. Every ordered pair of the live captures and of the
    replays is judged on the host question and passes it (all 40 failed --gate host before: the
    processes fall in two groups, one about 1.7x slower on the host, up to 1.98x)."""
    pairs = _noise_pairs()
    assert len(pairs) == 40
    captures = {path: load_capture(path) for pair in pairs for path in pair}
    widest = 1.0
    for path_a, path_b in pairs:
        result = diff(captures[path_a], captures[path_b])
        assert result.judged("host") and result.findings_of("host") == (), (path_a.name, path_b.name)
        assert result.exit_code(gates=("host",)) == result.exit_code() == 0
        for p in result.pairs:
            assert p.host is not None and p.host.verdict in ("SAME", "AMBIGUOUS")
            widest = max(widest, p.host.median_b_ns / p.host.median_a_ns)
    assert 1.9 < widest < HOST_FLOOR_RATIO  # the widest gap between two processes, inside the floor


def test_the_demo_pairs_host_question_is_not_judged(tmp_path):
    """The demo's seed pair recorded no host time: the host question says so and is not judged
    (it passed the host gate as if judged SAME); the diff record says so too."""
    demo = ROOT / "fusiondiff" / "data" / "demo"
    result = diff_files(demo / "seed_live.json", demo / "seed_replay.json")
    assert all(p.host is None for p in result.pairs)
    assert not result.judged("host")
    assert host_line(result) == "fd.execute's host time was not measured on both sides"
    record = tmp_path / "d.json"
    main(
        ["diff", str(demo / "seed_live.json"), str(demo / "seed_replay.json"), "--gate", "host", "--json", str(record)]
    )
    import json

    host = json.loads(record.read_text())["questions"]["host"]
    assert host["judged"] is False and host["verdict"].endswith("not measured on both sides")


def _waiting_live(kernel_share: float) -> Capture:
    """The H100's LayerNorm at offset 1, [4096, 4096], under thunderfx (tests/data/h100/
    offset_thunderfx_4096), derived: its session's calls set to ``kernel_share`` of its kernels'
    median (63.9 us), 25 of each kind, its warm-ups (15 to 19 us) repeated to 44. The recording's
    second fd.execute of the session took 62.8 us, its kernels' time: the signature of a call that
    returned when its kernels ended, made here the session's every call."""
    live = load_capture(DATA / "h100" / "offset_thunderfx_4096" / "live.json")
    (record,) = live.fusions
    host = record.conditions.host
    calls = record.timing.median_ns * kernel_share
    host = dataclasses.replace(
        host,
        execute_ns=host.execute_ns * 11,
        session_execute_ns=tuple(calls * (1 + 0.001 * i) for i in range(25)),
        session_call_ns=tuple(calls * 1.05 * (1 + 0.001 * i) for i in range(25)),
    )
    record = dataclasses.replace(record, conditions=dataclasses.replace(record.conditions, host=host))
    return dataclasses.replace(live, fusions=(record,))


def test_a_call_that_waits_for_its_kernels_is_named_as_such_not_host_bound():
    replay = with_host_samples(load_capture(DATA / "h100" / "offset_thunderfx_4096" / "replay_fusiondiff.json"))
    waiting = diff(_waiting_live(1.08), replay)  # a call 8 % over its kernels, warm-ups at a quarter
    rules = [f.rule for f in waiting.findings_of("host")]
    assert rules == ["waits_for_kernels"]
    (found,) = waiting.findings_of("host")
    assert not found.evidenced and found.explained_ns == 0
    assert ": A's calls wait for their kernels: a call takes 69.83 us on the host against 63.89 us" in wording.title(
        found
    )
    assert waiting.passes("host")  # listed, not gated: the GPU does not wait for this host
    assert "A's calls wait for their kernels in 1 fusion(s), not host-bound" in host_line(waiting)
    # the same side with calls well over its kernels' time keeps its GPU waiting
    bound = diff(_waiting_live(3.0), replay)
    assert [f.rule for f in bound.findings_of("host")] == ["host_bound"]
    assert not bound.passes("host")


def test_the_host_line_names_the_side_its_finding_names():
    """tests/data/h100/train_qwen3 on copies with enough host samples: both sides' calls exceed
    their kernels in all 9 fusions, A's (Thunder's region call, 130.4 us) by far more; the line said
    "B's host keeps its GPU waiting (500.2 us per step)" beside a finding that names A's 2.77 ms (over
    both recorded steps: 1.38 ms per step)."""
    folder = DATA / "h100" / "train_qwen3"
    result = diff(
        with_host_samples(load_capture(folder / "live.json")), with_host_samples(load_capture(folder / "replay.json"))
    )
    (found,) = result.findings_of("host")
    counts = {e.field: e for e in found.data}["host_bound_fusions"]
    assert counts.a == counts.b == 9  # the tie the line broke the wrong way
    assert "A's host keeps its GPU waiting (1.38 ms per step)" in host_line(result)
    assert "A is host-bound in 9 fusion(s)" in wording.title(found)


@pytest.mark.parametrize("repeat", [1, 4])
def test_fewer_than_the_minimum_never_judges_host_bound(repeat):
    # 4 and 16 warm-ups with 1 and 4 session calls: under HOST_MIN_SAMPLES of the calls and of fd.execute
    folder = DATA / "h100" / "train_qwen3"
    result = diff(
        with_host_samples(load_capture(folder / "live.json"), repeat=repeat),
        with_host_samples(load_capture(folder / "replay.json"), repeat=repeat),
    )
    assert result.findings_of("host") == () and not result.judged("host")
