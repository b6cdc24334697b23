"""The block-level statistics, on the CTAs the H200 recorded and on small cases worked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from fusiondiff.io.store import load_capture
from fusiondiff.io.timelines import load_arrays
from fusiondiff.records.block_stats import resident_per_sm, run_stats, timer_resolution_ns
from tests.blocks.conftest import BLOCKS, recorded_buffer


def _recorded(case: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    records = recorded_buffer(case)[8:].reshape(-1, 8)
    return records[:, 0], records[:, 1], records[:, 4] & 0xFFFFFFFF


def test_the_seed_kernels_as_the_h200_ran_them():
    offset = run_stats(*_recorded("rmsnorm_offset1_after_aligned"))
    aligned = run_stats(*_recorded("rmsnorm"))
    assert (offset.ctas, offset.sms_used, offset.max_ctas_per_sm) == (4096, 132, 34)
    assert (aligned.ctas, aligned.sms_used, aligned.max_ctas_per_sm) == (4096, 132, 34)
    # 512-thread blocks: 4 at once on an SM (2048 threads); the probed 128-thread kernel's 47
    # registers allow 10 (the plain kernel's 40 would allow 12)
    assert (offset.ctas_at_once, offset.waves) == (4, 9)
    assert (aligned.ctas_at_once, aligned.waves) == (10, 4)
    assert offset.span_ns == 33888 and aligned.span_ns == 20864
    assert offset.cta_p50_ns == pytest.approx(2656) and aligned.cta_p50_ns == pytest.approx(4352)
    assert offset.first_start_max_ns < 500 and aligned.first_start_max_ns < 500  # every SM starts at once
    assert offset.moved_ctas == 0


def test_a_grid_sync_kernel_runs_in_one_wave_of_two_ctas_per_sm():
    records = recorded_buffer("dependent_reductions", "nvfuser_inner_outer_persistent_f0_c1_r0_g0")[8:].reshape(-1, 8)
    stats = run_stats(records[:, 0], records[:, 1], records[:, 4] & 0xFFFFFFFF)
    assert (stats.ctas, stats.sms_used, stats.max_ctas_per_sm, stats.ctas_at_once, stats.waves) == (
        264,
        132,
        2,
        2,
        1,
    )
    assert stats.tail_ns < 0.05 * stats.span_ns  # co-resident CTAs end together


def test_the_timer_steps_by_32_ns_on_the_h200():
    start, _, _ = _recorded("rmsnorm")
    assert timer_resolution_ns(start) == 32.0
    assert timer_resolution_ns(np.array([5, 5])) is None


def test_resident_ctas_count_overlaps_not_touching_intervals():
    # SM 0: [0,10) [0,10) then [10,20) [10,20): two at once, never four; SM 1: one
    start = np.array([0, 0, 10, 10, 3])
    end = np.array([10, 10, 20, 20, 4])
    sm = np.array([0, 0, 0, 0, 1])
    assert resident_per_sm(start, end, sm) == {0: 2, 1: 1}


def test_waves_tail_and_first_starts_worked_by_hand():
    # SMs 0 and 2: 10 CTAs each, two at a time, 10 ns each: 5 waves; SM 1 starts its only CTA 40 ns
    # late, and it runs long: the tail
    waves = np.array([0, 0, 10, 10, 20, 20, 30, 30, 40, 40])
    start = np.concatenate([waves, waves, [40]])
    end = start + 10
    end[-1] = 95
    sm = np.array([0] * 10 + [2] * 10 + [1])
    stats = run_stats(start, end, sm)
    assert (stats.sms_used, stats.max_ctas_per_sm, stats.ctas_at_once, stats.waves) == (3, 10, 2, 5)
    assert stats.span_ns == 95
    # 90 % of the 21 CTAs (19 of them) had ended at 50 ns; the last ended at 95
    assert stats.tail_ns == 45
    assert stats.first_start_max_ns == 40 and stats.first_start_p50_ns == 0


def test_ctas_at_once_is_what_most_sms_held_not_one_sms_overlap():
    # five SMs hold two CTAs at once; on SM 4 the recorded intervals overlap four deep, as a few
    # SMs per run did on the H200 (tests/data/blocks/h200): the SMs held two
    start = np.array([0, 0, 10, 10] * 5)
    end = start + 10
    end[16:] = [30, 30, 30, 30]  # SM 4's: overlapping beyond what it can hold
    sm = np.repeat(np.arange(5), 4)
    stats = run_stats(start, end, sm)
    assert resident_per_sm(start, end, sm)[4] == 4
    assert (stats.ctas_at_once, stats.waves) == (2, 2)


def test_a_cta_that_moved_sm_is_counted():
    start, end, sm = np.array([0, 0]), np.array([5, 5]), np.array([1, 2])
    assert run_stats(start, end, sm, sm_end=np.array([1, 3])).moved_ctas == 1


def test_a_run_without_ctas_has_no_statistics():
    empty = np.array([], dtype=np.int64)
    with pytest.raises(ValueError):
        run_stats(empty, empty, empty)


def test_the_committed_timelines_are_the_recorded_buffers():
    capture = load_capture(BLOCKS / "seed" / "live.json")
    arrays = load_arrays(BLOCKS / "seed" / "live.json", capture)[(0, 0)]
    start, end, sm = _recorded("rmsnorm_offset1_after_aligned")
    assert np.array_equal(arrays.start_ns[0], start - start.min())
    assert np.array_equal(arrays.end_ns[0], end - start.min())
    assert np.array_equal(arrays.sm[0], sm)
