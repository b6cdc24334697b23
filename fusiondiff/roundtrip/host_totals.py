"""The host side of a round trip's totals (issue #27): per step, the host time of the session's calls
against the replay's ``fd.execute`` and against the kernels' time, kept apart from kernel time."""

from __future__ import annotations

import math

from fusiondiff.records.model import FusionRecord
from fusiondiff.records.units import duration
from fusiondiff.roundtrip.records import RoundTripResult


def host_per_call_ns(record: FusionRecord) -> float:
    """The record's host time per call (:attr:`fusiondiff.records.conditions.HostTiming.per_call_ns`); NaN
    where it was not recorded."""
    host = record.conditions.host if record.conditions else None
    value = host.per_call_ns if host else None
    return math.nan if value is None else value


def host_lines(result: RoundTripResult) -> list[str]:
    """The step's host totals (median x calls, summed over the records with both host times): the
    live session's calls, the replays' ``fd.execute``, the kernels, and the fusions whose call
    takes longer on the host than their kernels; nothing where no host time was recorded."""
    rows = [r for r in result.rows if not (math.isnan(r.live_host_ns) or math.isnan(r.replay_host_ns))]
    if not rows:
        return []
    live = sum(r.live_host_ns * r.call_count for r in rows)
    replay = sum(r.replay_host_ns * r.call_count for r in rows)
    kernels = sum(r.live_median_ns * r.call_count for r in rows)
    bound = sum(1 for r in rows if r.live_host_ns > r.live_median_ns)
    return [
        f"  host, records with both host times ({len(rows)}): live calls {duration(live)}, replayed fd.execute "
        f"{duration(replay)}, their kernels {duration(kernels)} (live); host-bound live (a call's host time over "
        f"its kernels'): {bound} record(s)"
    ]
