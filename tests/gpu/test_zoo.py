"""Every zoo scenario recorded on the GPU: fusiondiff names the planted cause first, nothing for the control.

Set FUSIONDIFF_ZOO_OUT to keep the recorded pairs (they are committed under tests/data/zoo)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu


def test_zoo_scenarios_are_diagnosed(tmp_path):
    pytest.importorskip("thunder")
    from repro.zoo.run_zoo import render_table, run_all

    outdir = Path(os.environ.get("FUSIONDIFF_ZOO_OUT", tmp_path))
    results = run_all(outdir)
    print(render_table(results))
    assert len(results) >= 11
    wrong = [r for r in results if not r.correct]
    assert not wrong, wrong
