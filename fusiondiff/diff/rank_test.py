"""The two-sided Mann-Whitney U test, row by row over sample matrices, with numpy and the standard
library alone.

scipy's ``mannwhitneyu`` gives the same p-values (to the last few bits: the normal tail here is
``math.erfc``, scipy's is its own), but importing ``scipy.stats`` costs most of a one-fusion diff's
time, and a diff needs one test per timed pair. The method is scipy's choice for one call over a
matrix of rows: the exact null distribution of U when either side has at most
:data:`EXACT_MAX_SAMPLES` samples and no row of the matrix has ties, else the normal approximation
with the tie correction and a continuity correction of one half.
"""

from __future__ import annotations

import functools
import math

import numpy as np

EXACT_MAX_SAMPLES = 8
"""With at most this many samples on one side (and no ties) the p-value is exact."""


def mann_whitney_p(a: np.ndarray, b: np.ndarray) -> list[float]:
    """Two-sided p-values of the U test of each row of ``a`` against the same row of ``b`` (rows of
    equal length on each side; NaN for a row holding a NaN sample)."""
    rows, count_a = a.shape
    count_b = b.shape[1]
    if rows == 0:
        return []
    u_a, tie_terms = _u_statistics(a, b)
    u = np.maximum(u_a, count_a * count_b - u_a).tolist()
    unknown = (np.isnan(a).any(axis=1) | np.isnan(b).any(axis=1)).tolist()
    exact = min(count_a, count_b) <= EXACT_MAX_SAMPLES and not tie_terms.any()
    if exact:
        p = [_exact_p(int(ui), count_a, count_b) for ui in u]
    else:
        p = [_normal_p(ui, count_a, count_b, ti) for ui, ti in zip(u, tie_terms.tolist())]
    return [math.nan if nan else pi for pi, nan in zip(p, unknown)]


def _u_statistics(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's U statistic of side A (its rank sum less its least possible) and its tie term,
    the sum of ``t**3 - t`` over its groups of ``t`` tied samples, both sides ranked together
    (ties take the average of their ranks)."""
    both = np.concatenate((a, b), axis=1)
    order = np.argsort(both, axis=1, kind="stable")
    ordered = np.take_along_axis(both, order, axis=1)
    width = both.shape[1]
    positions = np.broadcast_to(np.arange(width), both.shape)
    new_group = np.ones(both.shape, dtype=bool)
    new_group[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    first = np.maximum.accumulate(np.where(new_group, positions, 0), axis=1)
    ends_group = np.ones(both.shape, dtype=bool)
    ends_group[:, :-1] = new_group[:, 1:]
    last = np.minimum.accumulate(np.where(ends_group, positions, width)[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty(both.shape)
    np.put_along_axis(ranks, order, (first + last) / 2 + 1, axis=1)
    count_a = a.shape[1]
    u_a = ranks[:, :count_a].sum(axis=1) - count_a * (count_a + 1) / 2
    sizes = (last - first + 1).astype(float)
    # each sample of a group of t adds t**2 - 1: t of them add t**3 - t
    return u_a, (sizes * sizes - 1).sum(axis=1)


def _normal_p(u: float, count_a: int, count_b: int, tie_term: float) -> float:
    """The two-sided p-value of the larger U statistic ``u`` from the normal approximation, with
    the tie correction of its variance and a continuity correction of one half."""
    n = count_a + count_b
    sigma = math.sqrt(count_a * count_b / 12 * ((n + 1) - tie_term / (n * (n - 1))))
    excess = u - count_a * count_b / 2 - 0.5
    if sigma == 0:  # every sample tied: U sits on its mean
        return 1.0
    return min(1.0, math.erfc(excess / sigma / math.sqrt(2)))


def _exact_p(u: int, count_a: int, count_b: int) -> float:
    """The two-sided p-value of the larger U statistic ``u`` under the exact null distribution:
    twice the chance of a U at least as large, at most 1."""
    ways = _ways_at_most(count_a * count_b - u, min(count_a, count_b), max(count_a, count_b))
    return min(1.0, 2 * ways / math.comb(count_a + count_b, count_a))


@functools.lru_cache(maxsize=256)
def _ways_at_most(k: int, small: int, large: int) -> int:
    """How many of the ``comb(small + large, small)`` orderings of two samples give a U of at most
    ``k``: the coefficients up to ``q**k`` of the Gaussian binomial, the product over ``i`` of
    ``(1 - q**(large + i)) / (1 - q**i)``, in exact integers."""
    ways = [1] + [0] * k
    for i in range(1, small + 1):
        step = large + i
        for degree in range(k, step - 1, -1):
            ways[degree] -= ways[degree - step]
        for degree in range(i, k + 1):
            ways[degree] += ways[degree - i]
    return sum(ways)
