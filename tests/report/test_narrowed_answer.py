"""Narrowing (``--top``, ``--fusion``, ``--min-gap``) apportions every question's ledger again over
the fusions shown, alike in ``diff`` and ``report``; ``report --exit-code`` takes the gates of
``diff`` (``--gate``, ``--strict``)."""

from __future__ import annotations

import sys
from pathlib import Path

from fusiondiff.diff.core import diff
from fusiondiff.io.store import load_capture
from fusiondiff.report.interface import DiffReport
from fusiondiff.report.views.filters import Selection, select

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from inprocess import fusiondiff  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data"
DEEP = (DATA / "roundtrip_deep" / "live.json.gz", DATA / "roundtrip_deep" / "replay_one_gpu.json")
OFFSET = (DATA / "h100" / "offset_thunderfx" / "live.json", DATA / "h100" / "offset_thunderfx" / "replay_nvfuser.json")


def _report(a: Path, b: Path) -> DiffReport:
    ca, cb = load_capture(a), load_capture(b)
    return DiffReport(diff(ca, cb), ca, cb)


def test_a_narrowed_report_keeps_the_ledger_of_what_it_shows():
    """roundtrip_deep narrowed to nvFusion0, SAME: the report said "kernel time (passes): gap
    0.416 us: unexplained 0.416 us", nvFusion3's gap, a fusion it did not show."""
    whole = _report(*DEEP)
    assert whole.result.ledger("kernel").gap_ns > 400
    narrowed = select(whole, Selection(fusion="nvFusion0")).result
    (pair,) = narrowed.pairs
    assert pair.timing.verdict == "SAME"
    assert narrowed.ledger("kernel").gap_ns == 0 and narrowed.findings == ()
    assert narrowed.passes("kernel") and narrowed.exit_code() == 0
    run = fusiondiff("report", *DEEP, "--fusion", "nvFusion0")
    assert "kernel time (passes, gated by default): no gap to apportion" in run.stdout
    assert "0.416 us" not in run.stdout
    # the fusion that differs, narrowed to: its gap, unexplained, and the gate fails
    slower = select(whole, Selection(fusion="nvFusion3")).result
    assert slower.ledger("kernel").unexplained_ns == whole.result.ledger("kernel").unexplained_ns
    assert [f.rank for f in slower.findings] == [1] and slower.exit_code() == 1


def test_diff_takes_the_narrowing_options_of_report():
    run = fusiondiff("diff", *DEEP, "--fusion", "nvFusion0")
    assert run.returncode == 0, run.stderr  # the fusion shown runs at the same speed
    assert "narrowed by --fusion nvFusion0: 1 of 12 matched fusion(s)" in run.stdout
    assert "nvFusion3" not in run.stdout
    assert fusiondiff("diff", *DEEP, "--top", "1").returncode == 1  # nvFusion3, the largest gap
    assert fusiondiff("diff", *DEEP, "--min-gap", "0.3").returncode == 1
    none = fusiondiff("diff", *DEEP, "--min-gap", "1000")  # it said "A and B run different programs"
    assert none.returncode == 2 and none.stdout == ""
    assert none.stderr.strip().splitlines() == [
        "fusiondiff diff: error: --min-gap 1000.00 us selects no fusion (the largest median gap is 0.416 us): "
        "nothing to answer for"
    ]
    refused = fusiondiff("diff", *DEEP, "--top", "1", "--format", "json")
    assert refused.returncode == 2 and "always whole" in refused.stderr and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1


def test_diff_json_record_stays_whole_when_the_text_is_narrowed(tmp_path):
    record = tmp_path / "d.json"
    run = fusiondiff("diff", *DEEP, "--fusion", "nvFusion0", "--json", record)
    assert run.returncode == 0
    assert fusiondiff("report", record, "--exit-code").returncode == 1  # the whole diff: nvFusion3 differs


def test_report_exit_code_takes_the_gates():
    """offset_thunderfx with nvFuser's own repro: the same speed, storage offset and constant
    precision differ. ``report --exit-code`` refused --gate and --strict."""
    assert fusiondiff("report", *OFFSET, "--exit-code").returncode == 0
    assert fusiondiff("report", *OFFSET, "--exit-code", "--strict").returncode == 1
    assert fusiondiff("report", *OFFSET, "--exit-code", "--gate", "fidelity").returncode == 1
    assert fusiondiff("report", *OFFSET, "--exit-code", "--gate", "host").returncode == 3  # host not judged
    assert fusiondiff("report", *OFFSET, "--strict").returncode == 0  # no --exit-code: written is done
