"""`show` of a capture with thousands of fusions prints a bounded summary and says what it left out."""

from __future__ import annotations

from pathlib import Path

from fusiondiff.io.store import load_capture
from fusiondiff.report.text import MAX_FUSIONS_SHOWN, render_capture_text

import synthetic as syn

GEMMA_STEP = Path(__file__).parent.parent / "data" / "roundtrip_gemma" / "live.json.gz"


def test_show_caps_fusions_and_kernels_and_counts_the_rest() -> None:
    kernels = [syn.kernel("pointwise", g, order=g, n=3) for g in range(5)]
    capture = syn.capture([syn.fusion(f"nvFusion{i}", kernels=kernels) for i in range(7)])
    text = render_capture_text(capture, max_fusions=4, max_kernels=2)
    assert "#3 nvFusion3" in text and "#4 nvFusion4" not in text
    assert "... 3 more fusion(s) not shown" in text
    assert text.count("... 3 more kernel(s) not shown") == 4
    assert render_capture_text(capture, max_fusions=None, max_kernels=None).count("nvfuser_pointwise_g") == 35


def test_show_of_a_small_capture_is_unchanged() -> None:
    capture = syn.capture([syn.fusion(f"nvFusion{i}") for i in range(3)])
    assert render_capture_text(capture) == render_capture_text(capture, max_fusions=None, max_kernels=None)


def test_the_default_limit_keeps_a_recorded_training_step_whole_and_cuts_what_is_over_it() -> None:
    step = load_capture(GEMMA_STEP)  # a whole training step of a model, 544 fusions
    assert "not shown" not in render_capture_text(step)
    over = syn.capture([syn.fusion(f"nvFusion{i}") for i in range(MAX_FUSIONS_SHOWN + 1)])
    assert "... 1 more fusion(s) not shown" in render_capture_text(over)
