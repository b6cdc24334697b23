"""The SM clock a capture's samples ran at, as far as its readings say.

The recorder reads the SM clock through NVML next to each fusion's samples
(``FusionRecord.sm_clock_mhz``) and once when recording starts (``Environment.sm_clock_mhz``). A
reading taken while no kernel runs can be the GPU's idle clock: an H200 rests at 345 MHz of its
1980, and a fresh replay process of a few-microsecond fusion reads 345 MHz before and after its
samples (``tests/data/roundtrip_gemma``), although the kernels ran boosted. Such a reading says
nothing about the clock the samples ran at: it is labelled idle (:func:`is_idle`) and left out, and
a capture whose readings are all idle has no known clock while timing, rather than a low one.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from fusiondiff.records.model import Capture

IDLE_FRACTION = 0.3
"""A reading below this fraction of the GPU's highest SM clock is its idle clock (H200: 345 of
1980 MHz, 17 %; idle and ramping readings of 345-465 MHz were recorded); a GPU running kernels,
even held back by power or heat, stays above it."""


def is_idle(reading_mhz: float, max_mhz: float | None) -> bool:
    """A reading at the idle clock of a GPU whose highest SM clock is ``max_mhz`` (unknown: no)."""
    return reading_mhz < _idle_below(max_mhz)


def _idle_below(max_mhz: float | None) -> float:
    """The reading below which a clock is idle (:func:`is_idle`): -inf where ``max_mhz`` is unknown.
    Computed once for a whole list of readings: a capture holds tens of thousands."""
    return IDLE_FRACTION * max_mhz if max_mhz is not None and max_mhz > 0 else -math.inf


def max_clock_mhz(*captures: Capture) -> float | None:
    """The highest SM clock the captures' GPUs report (the boost limit), else their highest reading."""
    limits = [m for c in captures if (m := c.environment.max_sm_clock_mhz)]
    if limits:
        return float(max(limits))
    readings = [r for c in captures for f in c.fusions for r in f.sm_clock_mhz]
    return float(max(readings)) if readings else None


@dataclass(frozen=True)
class TimedClock:
    """The SM clock a capture's samples ran at."""

    mhz: float | None
    """The median of the readings around the samples that are not idle (the clock at the start
    when no fusion has readings); ``None`` when every reading is idle or none was taken."""
    idle: tuple[int, ...] = ()
    """The idle readings left out (distinct, the most frequent first)."""


def timed_clock(capture: Capture, max_mhz: float | None = None) -> TimedClock:
    """The SM clock while the capture's samples ran (see the module docstring); ``max_mhz`` is the
    GPU's highest clock (default: :func:`max_clock_mhz` of the capture)."""
    limit = max_mhz if max_mhz is not None else max_clock_mhz(capture)
    readings: Sequence[int] = [c for f in capture.fusions for c in f.sm_clock_mhz]
    if not readings:
        if capture.fusions and all(f.failure is not None for f in capture.fusions):
            return TimedClock(None)  # nothing was timed: no clock ran any samples
        start = capture.environment.sm_clock_mhz
        readings = [start] if start is not None else []
    below = _idle_below(limit)
    busy = [r for r in readings if not r < below]
    idle = tuple(r for r, _ in Counter(r for r in readings if r < below).most_common())
    return TimedClock(statistics.median(busy) if busy else None, idle)


def running(readings: Sequence[int], max_mhz: float | None) -> list[int]:
    """The readings of one fusion's samples that are not idle."""
    below = _idle_below(max_mhz)
    return [r for r in readings if not r < below]
