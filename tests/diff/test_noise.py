"""Kernel verdicts judged between processes (fusiondiff.diff.noise), on synthetic timings."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import t as student

from fusiondiff.diff import noise
from fusiondiff.diff.noise import (
    ABSOLUTE_FLOOR_NS,
    calibrated_spread,
    calibration,
    compare_processes,
    compare_timings,
    family_quantile,
    student_quantile,
)
from fusiondiff.records.gates import EXIT_ERROR, EXIT_FAILS, EXIT_NOT_MEASURED, combined_exit_code, exit_code_of
from fusiondiff.records.model import Timing

H200 = "NVIDIA H200"


def timing(median_ns: float, spread: float = 0.002, n: int = 30) -> Timing:
    """``n`` samples around ``median_ns``, evenly spread over +-``spread`` of it."""
    return Timing(tuple(median_ns * (1 + spread * (2 * i / (n - 1) - 1)) for i in range(n)))


def test_the_calibration_names_its_source_and_covers_every_duration():
    entries = calibration()
    assert [c.name for c in entries] == [
        "H200 0-10 us",
        "H200 10-50 us",
        "H200 50+ us",
        "H100 0-10 us",
        "H100 10-50 us",
    ]
    assert all(0.001 < c.spread < 0.02 for c in entries)
    assert calibrated_spread(H200, 20_000.0) == (entries[1].spread, "H200 10-50 us")
    assert calibrated_spread("NVIDIA H100 80GB HBM3", 20_000.0) == (entries[4].spread, "H100 10-50 us")
    # no H100 fusion of 50 us or more was recorded in several processes: the largest at that size
    spread, name = calibrated_spread("NVIDIA H100 80GB HBM3", 60_000.0)
    assert (
        spread == entries[2].spread and name == "H200 50+ us, the largest at this size: none for NVIDIA H100 80GB HBM3"
    )
    spread, name = calibrated_spread(None, 5_000.0)
    assert spread == max(entries[0].spread, entries[3].spread) and name.endswith("none for an unnamed GPU")


def test_a_gap_within_the_floor_is_same_and_beyond_it_differs():
    floor = compare_timings([(timing(20_000), timing(20_000))], (H200, H200))[0].floor
    # one fusion, one process a side, 1.25 % spread: z 2.58 * sqrt(2) * 1.25 %, a little more for e
    assert 0.045 < floor < 0.05
    inside, beyond = compare_timings(
        [
            (timing(20_000), timing(20_000 * math.exp(0.9 * floor))),
            (timing(20_000), timing(20_000 * math.exp(1.1 * floor))),
        ],
        (H200, H200),
        judged=1,
    )
    assert inside.verdict == "SAME" and inside.spread == "calibration" and inside.spread_of == "H200 10-50 us"
    assert beyond.verdict == "SLOWER" and "beyond +-" in beyond.reason
    assert inside.p_value is None and inside.processes_a == inside.processes_b == 1


def test_more_fusions_raise_the_floor_to_keep_the_family_wise_error():
    assert family_quantile(1) == pytest.approx(2.5758, abs=1e-4)
    assert family_quantile(10_000) == pytest.approx(4.8916, abs=1e-4)
    one = compare_timings([(timing(20_000), timing(20_000))], (H200, H200), judged=1)[0].floor
    many = compare_timings([(timing(20_000), timing(20_000))], (H200, H200), judged=26)[0].floor
    assert many / one == pytest.approx(family_quantile(26) / family_quantile(1))


def test_a_tiny_fusion_gets_the_absolute_floor():
    (v,) = compare_timings([(timing(2_000), timing(2_200))], (H200, H200))
    assert v.verdict == "SAME" and v.floor == pytest.approx(ABSOLUTE_FLOOR_NS / math.sqrt(2_000 * 2_200))


@pytest.mark.parametrize(
    ("samples", "why"),
    [
        ((), "no samples on side B"),
        ((0.0,) * 30, "median sample is 0 ns"),
        ((20_000.0, 21_000.0), "only 2 sample(s) on side B: too few"),
        ((math.nan,) * 30, "not numbers (NaN)"),
    ],
)
def test_nothing_measured_is_not_measured_never_same(samples, why):
    (v,) = compare_timings([(timing(20_000), Timing(samples))])
    assert v.verdict == "NOT MEASURED" and why in v.reason and math.isnan(v.floor)


def test_several_processes_a_side_measure_their_own_spread():
    factors = (1.000, 1.004, 0.996, 1.002, 0.998)
    a = [timing(200_000 * f) for f in factors]
    b = [timing(200_000 * 1.03 * f) for f in factors]
    (v,) = compare_processes([(a, b)], (H200, H200))
    logs = [math.log(f) for f in factors]
    mean = sum(logs) / 5
    spread = math.sqrt(sum((x - mean) ** 2 for x in logs) / 4)  # each side's own, 4 degrees of freedom
    assert v.spread == "measured" and v.processes_a == 5 and v.processes_b == 5
    assert v.spread_of == "measured in 5 processes of A; measured in 5 processes of B"
    t = student.ppf(1 - 0.01 / 2, 4)
    assert v.floor == pytest.approx(math.sqrt(2 * (t * spread) ** 2 / 5), rel=1e-6)
    assert v.verdict == "SLOWER" and v.median_b_ns / v.median_a_ns == pytest.approx(1.03)


def test_one_process_against_several_keeps_the_calibration_for_the_one():
    """B's three processes measure B's spread; A's one process is not assumed to move as they do."""
    one, three = [timing(20_000)], [timing(20_000), timing(20_100), timing(19_900)]
    (v,) = compare_processes([(one, three)], (H200, H200))
    assert v.spread == "measured" and v.verdict == "SAME"
    assert v.spread_of == "calibrated for A: H200 10-50 us; measured in 3 processes of B"
    (alone,) = compare_processes([(one, [timing(20_000)])], (H200, H200))
    assert v.floor > math.sqrt(0.5) * alone.floor  # A's calibrated half of the floor stays


def test_two_processes_are_too_few_to_measure_a_spread():
    (v,) = compare_processes([([timing(20_000)], [timing(20_000), timing(20_100)])], (H200, H200))
    assert v.spread == "calibration" and "measured" not in v.spread_of


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7, 30, 199, 201, 1000])
@pytest.mark.parametrize("p", [0.975, 0.995, 1 - 0.01 / 2000])
def test_student_quantile_matches_scipy(df, p):
    assert student_quantile(p, df) == pytest.approx(student.ppf(p, df), rel=1e-4)


positive = st.floats(min_value=1_000, max_value=1e6)


@settings(max_examples=200, deadline=None)
@given(positive, positive, st.floats(min_value=0, max_value=0.2), st.floats(min_value=0, max_value=0.2))
def test_swapping_the_sides_mirrors_the_verdict_with_the_same_floor(ma, mb, sa, sb):
    ab = compare_timings([(timing(ma, sa), timing(mb, sb))], (H200, "NVIDIA H100 80GB HBM3"))[0]
    ba = compare_timings([(timing(mb, sb), timing(ma, sa))], ("NVIDIA H100 80GB HBM3", H200))[0]
    mirror = {"FASTER": "SLOWER", "SLOWER": "FASTER"}
    assert ba.verdict == mirror.get(ab.verdict, ab.verdict)
    assert ba.floor == pytest.approx(ab.floor, rel=1e-12)


def test_exit_codes_of_outcomes():
    assert exit_code_of([]) == 0 and exit_code_of(["passes", "passes"]) == 0
    assert exit_code_of(["passes", "not measured"]) == EXIT_NOT_MEASURED == 3
    assert exit_code_of(["not measured", "fails"]) == EXIT_FAILS
    assert (
        combined_exit_code([0, 3, 0]) == 3
        and combined_exit_code([3, 1]) == 1
        and combined_exit_code([1, 2]) == EXIT_ERROR
    )


def test_a_first_kernel_verdict_imports_no_scipy(tmp_path):
    """The verdicts are computed without scipy (half a second to import)."""
    code = (
        "import sys\n"
        "from fusiondiff.diff.noise import compare_timings\n"
        "from fusiondiff.records.model import Timing\n"
        "v = compare_timings([(Timing((1e4, 1.1e4, 1.2e4)), Timing((2e4, 2.1e4, 2.2e4)))])[0]\n"
        "assert v.verdict == 'SLOWER', v\n"
        "assert 'scipy' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


samples = st.lists(st.floats(min_value=0, max_value=2e5), max_size=12).map(tuple)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(samples, samples), min_size=1, max_size=5))
def test_the_array_path_of_one_process_a_side_agrees_with_the_general_one(pairs):
    timings = [(Timing(a), Timing(b)) for a, b in pairs]
    fast = compare_timings(timings, (H200, None))
    general = compare_processes([((a,), (b,)) for a, b in timings], (H200, None))
    for f, g in zip(fast, general):
        assert (f.verdict, f.reason, f.spread_of, f.warnings) == (g.verdict, g.reason, g.spread_of, g.warnings)
        assert f.floor == pytest.approx(g.floor, rel=1e-9, nan_ok=True)


def test_a_subnormal_median_is_judged_without_a_math_error():
    """A median of 5e-324 ns against one of 2 ns: their quotient is 0 in floats, their log ratio is
    not (within the absolute floor: SAME)."""
    (v,) = compare_timings([(Timing((0.0, 2.0, 2.0)), Timing((0.0, 1.0, 5e-324)))], (H200, None))
    assert v.verdict == "SAME" and v.ratio == 0.0 and "median gap" in v.reason


positive = st.floats(min_value=5e-324, max_value=1e9, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(
    positive, positive, st.floats(0, 1e9), st.floats(0, 1e9), st.integers(3, 100), st.integers(3, 100), st.floats(0, 2)
)
def test_a_pair_measured_on_both_sides_is_judged_as_two_reduced_sides_are(ma, mb, qa, qb, ca, cb, floor):
    """The array path judges a pair of one process a side, both measured, from its numbers: the
    same verdict record, field for field, as from the two reduced sides (noisy sides included)."""
    fast = noise._judged_measured(ma, mb, qa, qb, ca, cb, floor, "H200 10-50 us")
    general = noise._judged(
        noise._Side(ca, ma, qa, 1), noise._Side(cb, mb, qb, 1), floor, "calibration", "H200 10-50 us"
    )
    assert fast == general
