"""The recordings against their noise: no false alarm between processes of one program, the same
answer both ways round, a capture clean against itself, nothing measured never read as SAME, and
two programs said apart (``benchmarks/check_same_program.py`` runs the first three)."""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

import pytest

from fusiondiff.diff import diff
from fusiondiff.front.api import diff_files, open_report
from fusiondiff.front.cli import main
from fusiondiff.io.store import load_capture
from fusiondiff.report.formats.html import HtmlRenderer
from fusiondiff.report.words.questions import fidelity_line, kernel_line

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.check_same_program import (  # noqa: E402
    Differ,
    behaviour_pairs,
    same_program_alarms,
    self_breaks,
    swapped_breaks,
)

DATA = ROOT / "tests" / "data"
DEMO = ROOT / "fusiondiff" / "data" / "demo"


def _cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["diff", *args])
    return code, " ".join(out.getvalue().split())


@pytest.fixture(scope="module")
def differ() -> Differ:
    return Differ()


def test_no_kernel_or_fidelity_false_alarm_between_processes_of_one_program(differ):
    runs = list(same_program_alarms(differ))
    # the round trip's 158 ordered replay pairs, the zoo's 4 control pairs, the H100's 10 processes' 90
    assert len(runs) == 252
    alarms = [(name, failed) for name, _, _, failed in runs if "default=" in failed or "strict=" in failed]
    assert alarms == []


def test_every_recorded_pair_gives_the_same_answer_both_ways_round(differ):
    assert len(behaviour_pairs()) > 130
    assert list(swapped_breaks(differ)) == []


def test_every_capture_is_clean_against_itself(differ):
    assert list(self_breaks(differ)) == []


def test_a_crash_on_both_sides_is_no_difference():
    result = diff_files(DATA / "fidelity" / "crash" / "replay.json", DATA / "fidelity" / "crash" / "replay.json")
    assert [p.failed for p in result.pairs] == [("A", "B")] and result.pairs[0].failed_alike
    assert not result.findings and result.exit_code(strict=True) == 0


def test_the_0_ns_pair_is_not_measured_never_same():
    a, b = DATA / "h100" / "zoo" / "cupti_conflict" / "live.json", DATA / "zoo" / "cupti_conflict" / "live.json"
    result = diff_files(a, b)
    assert [p.timing.verdict for p in result.pairs] == ["NOT MEASURED"]
    assert not result.same_speed and result.outcome("kernel") == "not measured"
    assert kernel_line(result).startswith("kernel time not measured: side A's median sample is 0 ns")
    code, text = _cli(str(a), str(b))
    assert code == 3 and "SAME" not in text.split("fusions", 1)[0]
    assert "kernel time (not measured, gated by default)" in text


def test_gate_host_on_the_demo_pair_without_host_times_is_not_measured(tmp_path):
    a, b = DEMO / "live.json", DEMO / "replay_fusiondiff.json"
    assert _cli(str(a), str(b))[0] == 0
    code, text = _cli(str(a), str(b), "--gate", "host")
    assert code == 3 and "host: fd.execute's host time was not measured on both sides" in text
    html = HtmlRenderer().render(open_report([a, b]))
    # the host answer, at the top of the page, is neither a pass nor a failure
    assert '<div class="verdict unknown" data-question="host"><strong>host:</strong>' in html


def test_two_unrelated_programs_are_said_first_and_compare_no_time():
    a, b = DATA / "blocks" / "h200" / "contention" / "live.json", DATA / "cli" / "live.json"
    assert load_capture(a).fusions[0].name == load_capture(b).fusions[0].name == "nvFusion0"
    for x, y in ((a, b), (b, a)):
        result = diff(load_capture(x), load_capture(y))
        assert result.different_programs and not result.pairs and len(result.unmatched) == 2
        assert kernel_line(result).startswith("A and B run different programs")
        assert fidelity_line(result).startswith("B runs a different program from A")
        assert result.outcome("fidelity") == "fails" and result.exit_code() == 1
        assert all(ledger.gap_ns == 0 for ledger in result.ledgers)  # no cause takes a gap
        code, text = _cli(str(x), str(y), "--strict")
        assert code == 1 and text.startswith("kernel: A and B run different programs")


def test_a_changed_definition_of_one_program_is_still_compared():
    """The zoo's wrapper scenario: another definition on the same inputs, the planted cause first."""
    result = diff_files(
        DATA / "zoo" / "wrapper_several_definitions" / "live.json",
        DATA / "zoo" / "wrapper_several_definitions" / "replay.json",
    )
    assert not result.different_programs and len(result.pairs) == 1
    assert result.findings[0].rule == "definition" and result.exit_code() == 1
