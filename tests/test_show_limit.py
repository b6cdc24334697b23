"""`show` of a capture with thousands of fusions prints a bounded summary and says what it left out."""

from __future__ import annotations

from fusiondiff.report.text import MAX_FUSIONS_SHOWN, render_capture_text

import synthetic as syn


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
    assert MAX_FUSIONS_SHOWN >= 1_000
