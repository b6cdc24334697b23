"""Timing verdicts on seeded synthetic samples (constructed in code, not recorded)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom, mannwhitneyu

from fusiondiff.diff.stats import _medians_and_iqrs, compare_timing, compare_timings, median_interval
from fusiondiff.records.model import Timing

from synthetic import samples


def timing(median_ns: float, n: int = 30, spread: float = 0.01, seed: int = 0) -> Timing:
    return Timing(samples_ns=samples(median_ns, n=n, spread=spread, seed=seed))


def test_same_distribution_is_same():
    v = compare_timing(timing(17_420, seed=1), timing(17_420, seed=2))
    assert v.verdict == "SAME"
    assert v.ratio == pytest.approx(1.0, abs=0.01)
    assert v.warnings == ()


def test_seed_gap_is_slower_and_reverse_is_faster():
    slower = compare_timing(timing(17_420, seed=1), timing(25_860, seed=2))
    assert slower.verdict == "SLOWER"
    assert slower.p_value is not None and slower.p_value < 0.01
    assert slower.ratio == pytest.approx(25_860 / 17_420, rel=0.02)
    assert slower.gap_ns > 8_000
    faster = compare_timing(timing(25_860, seed=2), timing(17_420, seed=1))
    assert faster.verdict == "FASTER"
    assert faster.gap_ns < -8_000


def test_significant_gap_under_the_relative_floor_is_same():
    # 1.5 % apart with 0.1 % noise: the U test is sure, but 1.5 % is under the 2 % floor.
    a, b = timing(20_000, spread=0.001, seed=1), timing(20_300, spread=0.001, seed=2)
    assert mannwhitneyu(a.samples_ns, b.samples_ns).pvalue < 0.01
    v = compare_timing(a, b)
    assert v.verdict == "SAME"
    assert "noise floor" in v.reason


def test_small_kernel_gap_under_the_absolute_floor_is_same():
    # 5 % of a 4 us kernel is 200 ns: under the 300 ns floor.
    v = compare_timing(timing(4_000, spread=0.001, seed=1), timing(4_200, spread=0.001, seed=2))
    assert v.verdict == "SAME"


def test_gap_hidden_in_noise_is_ambiguous():
    v = compare_timing(timing(20_000, spread=0.25, seed=3), timing(21_000, spread=0.25, seed=4))
    assert v.verdict == "AMBIGUOUS"
    assert "not significant" in v.reason
    assert any("noisy" in w for w in v.warnings)


def test_single_samples_decide_only_large_gaps():
    one_a, one_big, one_small = Timing((17_180.0,)), Timing((26_370.0,)), Timing((18_500.0,))
    big = compare_timing(one_a, one_big)
    assert big.verdict == "SLOWER"
    assert big.p_value is None
    assert any("fewer than 10" in w for w in big.warnings)
    small = compare_timing(one_a, one_small)
    assert small.verdict == "AMBIGUOUS"
    assert "1.25x" in small.reason


def test_few_overlapping_samples_are_ambiguous_even_with_a_large_median_gap():
    a = Timing((10_000.0, 10_100.0, 10_200.0, 30_000.0, 10_050.0))
    b = Timing((13_000.0, 13_100.0, 9_000.0, 13_200.0, 13_050.0))
    v = compare_timing(a, b)
    assert v.verdict == "AMBIGUOUS"
    assert "non-overlapping" in v.reason


def test_missing_samples_are_ambiguous_with_nan_ratio():
    v = compare_timing(Timing(()), timing(17_000))
    assert v.verdict == "AMBIGUOUS"
    assert "no samples on side A" in v.reason
    assert math.isnan(v.ratio)


def test_constant_identical_samples_are_same():
    v = compare_timing(Timing((5_000.0,) * 12), Timing((5_000.0,) * 12))
    assert v.verdict == "SAME"
    assert v.iqr_a_ns == 0.0


def test_batch_matches_single_calls_and_timing_statistics():
    pairs = [
        (timing(17_000, seed=1), timing(25_000, seed=2)),
        (timing(5_000, n=12, seed=3), timing(5_050, n=30, seed=4)),
        (timing(9_000, n=30, spread=0.1, seed=5), timing(10_000, n=20, spread=0.1, seed=6)),
        (Timing((1.0, 2.0, 3.0, 4.0, 100.0)), Timing((5.0,))),
    ]
    batch = compare_timings(pairs)
    for (a, b), v in zip(pairs, batch):
        assert v == compare_timing(a, b)
        assert v.median_a_ns == pytest.approx(a.median_ns)
        assert v.iqr_a_ns == pytest.approx(a.iqr_ns)
        assert v.count_b == b.count
    expected_p = mannwhitneyu(pairs[2][0].samples_ns, pairs[2][1].samples_ns, alternative="two-sided").pvalue
    assert batch[2].p_value == pytest.approx(expected_p)


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 30, 31, 100, 257])
def test_the_median_interval_is_the_narrowest_order_statistics_with_99_percent_coverage(n):
    values = [float(v) for v in range(n, 0, -1)]  # given in any order
    low, high = median_interval(values)
    k = int(low)  # the values are their own ranks
    assert high == n + 1 - k and k <= high

    def coverage(k: int) -> float:  # of [x(k), x(n+1-k)]
        return 1 - 2 * binom.cdf(k - 1, n, 0.5)

    if coverage(1) < 0.99:  # too few samples for 99 %: the whole range
        assert (low, high) == (1, n)
    else:
        assert coverage(k) >= 0.99 and (k + 1 > (n + 1) // 2 or coverage(k + 1) < 0.99)
    assert median_interval([]) == pytest.approx((math.nan, math.nan), nan_ok=True)


sample_values = st.one_of(st.floats(min_value=0, max_value=1e7), st.integers(0, 5).map(float), st.just(math.inf))


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 4), st.integers(1, 40), st.data())
def test_the_medians_and_iqrs_of_one_sort_are_numpys_to_the_bit(rows, count, data):
    values = data.draw(st.lists(sample_values, min_size=rows * count, max_size=rows * count))
    samples = np.reshape(np.asarray(values), (rows, count))
    if data.draw(st.booleans()):
        samples[0, data.draw(st.integers(0, count - 1))] = math.nan
    medians, iqrs = _medians_and_iqrs(samples)
    with np.errstate(invalid="ignore"):
        expected_iqrs = np.subtract(*np.percentile(samples, [75, 25], axis=1)) if count >= 2 else np.zeros(rows)
        assert np.array_equal(medians, np.median(samples, axis=1), equal_nan=True)
    assert np.array_equal(iqrs, expected_iqrs, equal_nan=True)
