"""Units for rendering: records keep nanoseconds and bytes; the text picks a unit when it is written.

As torch.utils.benchmark's ``select_unit`` does, a time is shown in the unit that reads best for it,
with 3-4 significant digits: 3.36 us, 15.49 us, 110.5 us, 11.30 ms, 2.01 s, never 1997893.88 us.

- A sentence's time (:func:`duration`) reads in us, ms or s: a sub-microsecond gap is ``0.448 us``, so
  the times of one finding share the microsecond its fusions are measured in.
- Numbers compared in one phrase (:func:`durations`: a gap against the noise floor, A's median against
  B's) share one unit, chosen for the largest of them.
- A table column (:class:`Column`) has one unit and one number of decimals, chosen for the column's
  typical (median) value, and says its unit in its header.
- Integers read as integers (:func:`number`: ``128243``, not ``128243.0``), and a zero time as ``0``
  (``0 us``); a time nothing measured reads ``-`` (``None`` or NaN: pass ``None`` where a record's
  zero means that nothing was measured, as a fusion that launched no kernel).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

TOO_LARGE = "too large"
"""How a number past any float (a byte count of a shape someone made up) reads."""


def as_float(value: float) -> float:
    """``value`` as a float; an integer past the largest float is infinite (with its sign), never an
    OverflowError: a capture's shapes are integers of any size, their byte counts too."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


UNITS: tuple[tuple[str, float], ...] = (("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9))
"""Every time unit, with its size in nanoseconds."""
_UNIT_AT = {name: i for i, (name, _) in enumerate(UNITS)}


def _known(ns: float | None) -> bool:
    return ns is not None and not math.isnan(ns)


def select_unit(ns: float, smallest: str = "ns") -> tuple[str, float]:
    """The largest unit (from ``smallest`` up) in which ``ns`` is at least 1: its name and size."""
    # a diff's verdicts call this once per kernel pair (tens of thousands): no search for the start
    magnitude = abs(ns)
    start = _UNIT_AT.get(smallest, 0)
    chosen = UNITS[start]
    for unit in UNITS[start + 1 :]:
        if not magnitude >= unit[1]:  # not ``<``: a NaN stays in the smallest unit
            break  # the units grow: no larger one fits either
        chosen = unit
    return chosen


def _decimals(value: float, unit: str) -> int:
    """3-4 significant digits for a value of this size: 0.448, 3.36, 15.49, 110.5 (none in ns)."""
    if unit == "ns":
        return 0
    magnitude = abs(value)
    return 1 if magnitude >= 100 else 2 if magnitude >= 1 else 3


def _format(ns: float, scale: float, decimals: int, signed: bool) -> str:
    if ns == 0:
        return "0"  # an integer, as integers read (issue #41: never ``0.000 us``, nor ``+0.000``)
    return f"{ns / scale:{'+' if signed else ''}.{decimals}f}"


def duration(ns: float | None, signed: bool = False) -> str:
    """A time for a sentence with its unit (``3.36 us``, ``0.448 us``, ``11.30 ms``, ``2.01 s``;
    ``+1.54 us`` when ``signed``); ``-`` when unknown (None or NaN)."""
    if not _known(ns):
        return "-"
    assert ns is not None
    unit, scale = select_unit(ns, smallest="us")
    return f"{_format(ns, scale, _decimals(ns / scale, unit), signed)} {unit}"


def durations(*values_ns: float, signed: Sequence[bool] = ()) -> list[str]:
    """Times compared in one phrase, in one unit chosen for the largest (``-0.56 us`` and
    ``2.21 us``); each with the unit, ``-`` for an unknown one; ``signed[i]``: value i with its sign."""
    known = [abs(v) for v in values_ns if _known(v)]
    if not known:
        return ["-" for _ in values_ns]
    largest = max(known)
    unit, scale = select_unit(largest, smallest="us")
    decimals = _decimals(largest / scale, unit)
    return [
        f"{_format(v, scale, decimals, i < len(signed) and signed[i])} {unit}" if _known(v) else "-"
        for i, v in enumerate(values_ns)
    ]


@dataclass(frozen=True)
class Column:
    """One unit and one number of decimals for a table column of times (:meth:`of` chooses them)."""

    unit: str
    scale: float
    decimals: int

    @classmethod
    def of(cls, values_ns: Iterable[float | None]) -> Column:
        """The column's unit, for its typical (median) value: ns, us, ms or s."""
        known = [abs(v) for v in values_ns if v is not None and _known(v) and v != 0]
        typical = statistics.median(known) if known else 1e3
        unit, scale = select_unit(typical)
        return cls(unit, scale, _decimals(typical / scale, unit))

    def cell(self, ns: float | None, signed: bool = False) -> str:
        """A value of the column, without its unit (the header has it); ``-`` when unknown."""
        return _format(ns, self.scale, self.decimals, signed) if ns is not None and _known(ns) else "-"

    def header(self, name: str, brackets: bool = False) -> str:
        """``A median us`` (``A median (us)`` with ``brackets``)."""
        return f"{name} ({self.unit})" if brackets else f"{name} {self.unit}"


def us(ns: float | None) -> str:
    """Nanoseconds as microseconds with two decimals, ``-`` when unknown (None or NaN): for fields
    whose unit is microseconds by name (a notebook's ``_us`` columns, plot axes)."""
    return "-" if ns is None or math.isnan(ns) else f"{ns / 1000:.2f}"


def number(value: object) -> str:
    """A recorded number as text, an integral float as an integer (``128243``, not ``128243.0``)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return str(int(value))
    return str(value)


def ratio(value: float) -> str:
    """A ratio with two decimals and ``x`` (``-`` when unknown)."""
    return "-" if math.isnan(value) else f"{value:.2f}x"


def floor_cell(floor: float, p: float | None) -> str:
    """A verdict's floor, the smallest gap its data could show, as ``+-4.8 %`` (a log ratio in
    per cent); a verdict recorded before floors shows its p-value instead."""
    return p_value(p) if math.isnan(floor) else f"+-{100 * floor:.1f} %"


def p_value(p: float | None) -> str:
    """A p-value in scientific notation (``-`` when no test was run)."""
    return "-" if p is None else f"{p:.1e}"
