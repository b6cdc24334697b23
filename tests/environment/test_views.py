"""The conditions table of the reports on SYNTHETIC records (tests/synthetic.py): what a side
could not see reads as such, never as a zero."""

from __future__ import annotations

import dataclasses

from fusiondiff.diff import diff
from fusiondiff.records.conditions import TimingConditions
from fusiondiff.report.interface import DiffReport
from fusiondiff.report.views.environment_view import conditions_rows, conditions_text
from tests.environment.test_findings import QUIET, _fusion, _pair, _quiet

import synthetic as syn


def _cells(a, b) -> dict[str, tuple[str, ...]]:
    ca, cb = _pair(a, b)
    return {row.side: row.cells for row in conditions_rows(DiffReport(diff(ca, cb), ca, cb))}


def test_processes_nvml_cannot_show_or_tell_apart_are_said_so():
    hidden = dataclasses.replace(QUIET, processes_listed=0, own_process_listed=False)
    apart = dataclasses.replace(QUIET, processes_listed=3, own_process_listed=False, other_process_count=2)
    cells = _cells(
        _fusion(176_000.0, TimingConditions(device=hidden)), _fusion(176_000.0, TimingConditions(device=apart))
    )
    assert cells["A"][4] == "not visible" and cells["B"][4] == "2 (PIDs apart)"


def test_a_side_without_nvml_or_other_work_shows_dashes_and_old_files_show_no_table():
    cells = _cells(_fusion(176_000.0, TimingConditions()), _quiet())
    assert cells["A"][3:] == ("-", "-", "-", "-") and cells["B"][3] == "0/30, 0.0 %"
    old = syn.fusion(kernels=[syn.kernel(median_ns=176_000.0)])  # written before issue #27
    a, b = _pair(old, old)
    assert conditions_text(DiffReport(diff(a, b), a, b)) == ""
