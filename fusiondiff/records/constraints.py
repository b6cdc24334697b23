"""What a value of a record's field may be: the rules the records declare on their fields, once.

A rule is an ``Annotated`` type: the field's type, the bounds msgspec enforces while it decodes a
file (``msgspec.Meta``), and the :class:`Rule` words a refusal is named with
(``live.json.fusions[0].inputs[0].shape[0]: -4 is negative``, said by :mod:`fusiondiff.records.codec`).
A record field that holds an integer is at least :data:`Int64`, so a crafted capture cannot hold
a number that no recording produces; a new field takes the rule it needs, or none.

Otherwise a damaged or crafted capture would flow into the differ, which would then report
"FASTER -1.00x" or "comparable". Rules across the fields of one record (a shape and its stride of
the same rank) are the record's ``__post_init__``.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from msgspec import Meta

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
FLOAT_MAX = sys.float_info.max


@dataclass(frozen=True)
class Rule:
    """What a value that breaks a field's bounds is called: the words after the value."""

    words: str
    """``is negative``: the refusal reads ``<path>: -4 is negative`` (``null is not a duration``)."""
    above: str | None = None
    """Other words for a value above the upper bound (``is more threads than a CUDA block holds``);
    ``None``: :attr:`words` for both bounds."""

    def refusal(self, value: object, above: bool = False) -> str:
        """The refusal of ``value`` (JSON null is named ``null``), ``above`` its upper bound or not."""
        words = self.above if above and self.above is not None else self.words
        return f"{'null' if value is None else repr(value)} {words}"


Int64 = Annotated[int, Meta(ge=INT64_MIN, le=INT64_MAX)]
"""Any integer a capture holds: it fits in 64 bits."""
Count = Annotated[int, Meta(ge=0, le=INT64_MAX), Rule("is negative")]
"""A size, index, count or clock: not negative."""
Positive = Annotated[int, Meta(ge=1, le=INT64_MAX), Rule("is not a positive count")]
"""A count of at least one (calls of a recorded fusion, processes in a session)."""
Duration = Annotated[float, Meta(ge=0.0, le=FLOAT_MAX), Rule("is not a duration")]
"""A device duration in ns: a finite number, not negative, never null."""
Finite = Annotated[float, Meta(ge=-FLOAT_MAX, le=FLOAT_MAX), Rule("is not a finite number")]
"""A finite number (an integer tensor's smallest or largest value)."""
Fraction = Annotated[float, Meta(ge=0.0, le=1.0), Rule("is not a fraction between 0 and 1")]
"""A share of a whole: 0 to 1 (of a sample window overlapped, a utilization)."""
# What CUDA lets a launch be, and a GPU have: a larger value comes from no recording, and the derived
# views (waves per SM) would spend memory and time on it.
GridDim = Annotated[
    int, Meta(ge=0, le=2**31 - 1), Rule("is negative", "is more blocks than a CUDA grid dimension holds")
]
"""A grid dimension (CUDA: at most 2**31 - 1)."""
BlockDim = Annotated[int, Meta(ge=0, le=1024), Rule("is negative", "is more threads than a CUDA block holds")]
"""A block (or cluster) dimension (CUDA: at most 1024 threads a block)."""
SmemBytes = Annotated[int, Meta(ge=0, le=2**20), Rule("is negative", "is more shared memory than a GPU gives a block")]
"""Shared memory of a block (227 KiB on an H200; 1 MiB is far above any GPU)."""
Registers = Annotated[int, Meta(ge=0, le=255), Rule("is negative", "is more registers than a thread can have")]
"""Registers per thread (CUDA: at most 255)."""
SmCount = Annotated[int, Meta(ge=0, le=4096), Rule("is negative", "is more SMs than a GPU has")]
"""A GPU's multiprocessors (132 on an H200)."""
PeakGbs = Annotated[float, Meta(ge=1e-3, le=1e6), Rule("is not a bandwidth a GPU has (1e-3 to 1e6 GB/s)")]
"""A DRAM bandwidth in GB/s (1e9 bytes per second)."""


if TYPE_CHECKING:
    NaNFloat = float
else:

    class _FloatsOnly(type):
        def __instancecheck__(cls, value: object) -> bool:
            return type(value) is float

    class NaNFloat(metaclass=_FloatsOnly):
        """A float that may be NaN (a median of no samples, a ratio to 0), read back from JSON null:
        JSON has no NaN, so the writer writes NaN as null. msgspec refuses null for a ``float``, so
        such a field is typed ``NaNFloat`` and :func:`read_nan_float` makes its values; every value
        is a plain ``float``."""


def read_nan_float(value: Any) -> float:
    """A :data:`NaNFloat` field's value from its JSON: a number, or NaN for null. Raises
    ``TypeError`` for anything else (msgspec then names the field)."""
    if value is None:
        return math.nan
    if type(value) is int:
        try:
            value = float(value)
        except OverflowError:
            raise TypeError("expected float") from None
    if type(value) is float and math.isfinite(value):
        return value
    raise TypeError("expected float")
