"""Units for rendering: records keep nanoseconds and bytes, text shows microseconds."""

from __future__ import annotations

import math


def us(ns: float | None) -> str:
    """Nanoseconds as microseconds with two decimals, ``-`` when unknown (None or NaN)."""
    return "-" if ns is None or math.isnan(ns) else f"{ns / 1000:.2f}"


def us_with_unit(ns: float | None) -> str:
    """:func:`us` followed by its unit, for sentences (``26.40 us``)."""
    return f"{us(ns)} us"


def ratio(value: float) -> str:
    """A ratio with two decimals and ``x`` (``-`` when unknown)."""
    return "-" if math.isnan(value) else f"{value:.2f}x"


def p_value(p: float | None) -> str:
    """A p-value in scientific notation (``-`` when no test was run)."""
    return "-" if p is None else f"{p:.1e}"
