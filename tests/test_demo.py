"""The README's main command on a machine without a GPU: the bundled H200 captures, diffed."""

from __future__ import annotations

import io

from fusiondiff.demo import run_demo


def test_offline_demo_names_the_cause_then_shows_the_repro_comparable():
    out, progress = io.StringIO(), []
    code = run_demo(offline=True, workdir="unused", progress=progress.append, out=out)
    text = out.getvalue()
    assert code == 0
    first, second = text.split("== live vs the replay of fusiondiff's repro")
    assert "1. [storage_offset, cause]" in first and "FASTER" in first
    assert "the two runs are comparable" in second and "finding" not in second
    assert any("NVIDIA H200" in line for line in progress)
