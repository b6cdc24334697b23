"""Host-time verdicts: does ``fd.execute`` take longer on the host on one side than on the other,
judged at the level where host time varies most, between processes.

Host time per call is measured in one process per side. Two processes of one program differ in
it by more than their own samples say: the allocator's state, which core the process runs on, a
thread of its own still busy (a profiler starting), the CPU's clock. Forty calls of one process
tell its median precisely, and a U test on them confirms that *these two processes* differ, not
that the programs do. So a host gap counts only where both hold:

1. each side has at least :data:`HOST_MIN_SAMPLES` calls timed on the host; with fewer (captures
   recorded before the protocol timed its forty host calls hold four warm-ups) the verdict is
   ``NOT MEASURED``: the host question could not be judged, which is neither SAME nor a difference;
2. the ratio of the medians is beyond :data:`HOST_FLOOR_RATIO`, the ratio two processes of one
   program exceed by chance with probability :data:`~fusiondiff.diff.stats.ALPHA` (the kernel
   question's error rate) given the between-process spread :data:`HOST_PROCESS_SPREAD`; and the
   samples' own test (:func:`fusiondiff.diff.stats.compare_timings`: floor and Mann-Whitney U at
   the same ``ALPHA``) confirms the direction.

A gap within the floor is SAME (within between-process noise); beyond it but unconfirmed by the
samples, AMBIGUOUS.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from statistics import NormalDist

from fusiondiff.diff.records import TimingVerdict
from fusiondiff.diff.stats import ALPHA, compare_timings
from fusiondiff.records.model import Timing

HOST_MIN_SAMPLES = 20
"""Host times a side needs for its host question to be judged. The protocol times
``recording.host_time.HOST_CALLS`` (40) calls before its warm-ups, so every new capture has
enough; the four warm-ups of older captures leave the question NOT MEASURED."""

HOST_PROCESS_SPREAD = 0.27
"""Standard deviation, in log space, of a fusion's host time per call between processes of one
program, measured on the H100 (tests/data/h100/noise: one training step in five live processes and
five replays, 44 host samples a record): the process medians' variance, less what 44 samples' own
spread gives a median, leaves 0.24 between the live processes and 0.27 between the replays. The
processes fall in two groups, one about 1.7x slower on the host than the other (up to 1.98x)."""

HOST_FLOOR_RATIO = math.exp(NormalDist().inv_cdf(1 - ALPHA / 2) * math.sqrt(2) * HOST_PROCESS_SPREAD)
"""The ratio of two processes' host medians that one program exceeds with probability ``ALPHA``
(two-sided, log-normal process medians): 2.67x. Smaller host gaps between one process and
another cannot be told from the processes themselves."""


def not_judged(a: Timing, b: Timing) -> bool:
    """A side has too few host samples for the question to be judged."""
    return min(len(a.samples_ns), len(b.samples_ns)) < HOST_MIN_SAMPLES


def compare_hosts(pairs: Sequence[tuple[Timing, Timing]]) -> list[TimingVerdict]:
    """The host verdict of each pair of host timings (B relative to A), in the order given: the
    samples' own verdicts (one batch), then the sample count and the between-process floor."""
    return [
        _too_few(a, b, verdict) if not_judged(a, b) else _between_processes(verdict)
        for (a, b), verdict in zip(pairs, compare_timings(pairs))
    ]


def _too_few(a: Timing, b: Timing, verdict: TimingVerdict) -> TimingVerdict:
    reason = (
        f"only {len(a.samples_ns)} vs {len(b.samples_ns)} host samples: the host question needs "
        f"{HOST_MIN_SAMPLES} a side to be judged"
    )
    return dataclasses.replace(verdict, verdict="NOT MEASURED", reason=reason, p_value=None)


def _between_processes(verdict: TimingVerdict) -> TimingVerdict:
    """A verdict on samples turned into one between processes: a gap within the floor is SAME."""
    low, high = sorted((verdict.median_a_ns, verdict.median_b_ns))
    if verdict.verdict not in ("FASTER", "SLOWER", "AMBIGUOUS") or not low > 0:
        return verdict
    if high / low < HOST_FLOOR_RATIO:
        reason = (
            f"host medians {high / low:.2f}x apart, within what two processes of one program differ "
            f"by (< {HOST_FLOOR_RATIO:.2f}x)"
        )
        return dataclasses.replace(verdict, verdict="SAME", reason=reason)
    return verdict
