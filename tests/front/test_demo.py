"""The README's main command on a machine without a GPU: the bundled H200 captures, diffed."""

from __future__ import annotations

import io

from fusiondiff.front.demo import run_demo


def test_offline_demo_says_what_was_planted_names_the_cause_then_shows_the_repro_the_same():
    out, progress = io.StringIO(), []
    code = run_demo(offline=True, workdir="unused", progress=progress.append, out=out)
    text = out.getvalue()
    assert code == 0
    intro, rest = text.split("== 1. live vs the replay of nvFuser's own repro script")
    first, rest = rest.split("== 2. live vs the replay of fusiondiff's repro")
    second, third = rest.split("== 3. nothing planted")
    assert "PLANT one cause" in intro and "storage offset 1" in intro
    assert "kernel: B is 1.40x faster" in first and "1. [storage_offset, cause]" in first
    assert "(evidence for #1)" in first  # the variant is the offset's evidence, not a second gap
    assert "kernel: same speed: the 1 matched fusion(s) SAME within noise (+-" in second
    assert "recorded properties identical" in " ".join(second.split())
    assert "findings, ranked" not in second  # (not "finding": the checkout's path may hold the word)
    # nvFusion3 meets the replay of its own script, 2.1 % faster: within what moves a fusion between
    # processes, so SAME (tests/diff/test_recorded_fidelity.py)
    assert "kernel: same speed: all 26 matched fusion(s) SAME within noise" in third
    assert "recorded properties identical" in third
    assert "fusiondiff replay repros/ -o replay.json" in third
    assert any("NVIDIA H200" in line for line in progress)
