"""The measured per-SM view of the Perfetto trace: a process per side, a track per SM, each CTA a
slice, where the kernel's block-level timeline was recorded (the derived view stays for the
kernels where nothing was measured: :mod:`fusiondiff.report.formats.perfetto`).

An SM runs several CTAs at once, and a trace track shows one slice at a time, so each SM's track
has as many lanes as it needed (``SM 7``, ``SM 7 #2``...): each CTA goes to the SM's first lane
free at its start. Of each kernel's instrumented runs one is shown (:func:`fusiondiff.report.views.block_view.shown_run`), its
first CTA start placed where the kernel starts on the kernels track; slices last their measured
duration (the instrumented kernel's, a few percent longer than the plain one's, which the kernel's
args say).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from fusiondiff.records.blocks import KernelTimeline
from fusiondiff.records.limits import CTAS_PER_KERNEL, CTAS_SHOWN
from fusiondiff.report.views.block_view import shown_run

PID = {"A": 5, "B": 6}
LANES = 64
"""Lanes per SM track at most (an SM holds at most 32 CTAs of one kernel at once)."""
MAX_CTAS = CTAS_PER_KERNEL
"""CTAs shown per kernel at most (the earliest to start); the kernel's slice args say how many."""
NOTE = (
    "measured: one slice per CTA, from thread 0's start to the last warp's end (%globaltimer), on the SM "
    "%smid named; of the instrumented runs the one that used fewest SMs where they differ, else the median span"
)


class MeasuredSMs:
    """One side's measured SM tracks, filled kernel by kernel in timeline order, at most
    :data:`~fusiondiff.records.limits.CTAS_SHOWN` slices over all kernels (``left_out`` counts the
    kernels past it, which keep their kernel slice only)."""

    def __init__(self, side: str, label: str, arrays: Mapping[tuple[int, int], Any]) -> None:
        self.side, self.label, self.arrays = side, label, arrays
        self._free: dict[int, list[int]] = {}
        """Per SM, when each of its lanes is free again (ns on the trace's timeline)."""
        self.left = CTAS_SHOWN
        """Slices this side may still draw."""
        self.left_out = 0
        """Measured kernels whose CTAs were not drawn: the side's slices were spent."""

    def has(self, fusion_index: int, order: int) -> bool:
        return (fusion_index, order) in self.arrays

    def kernel_events(
        self, fusion_index: int, order: int, name: str, timeline: KernelTimeline | None, start_ns: int
    ) -> list[dict[str, Any]]:
        """The slices of one kernel's CTAs, its first CTA start at ``start_ns``."""
        arrays = self.arrays[(fusion_index, order)]
        run = shown_run(arrays)
        starts, ends, sms = arrays.start_ns[run], arrays.end_ns[run], arrays.sm[run]
        shown = np.argsort(starts, kind="stable")[:MAX_CTAS]
        if len(shown) > self.left:
            self.left_out += 1
            return []
        self.left -= len(shown)
        events = []
        for cta in shown:
            begin, end, sm = start_ns + int(starts[cta]), start_ns + int(ends[cta]), int(sms[cta])
            lane = self._lane(sm, begin, end)
            events.append(
                {
                    "ph": "X",
                    "name": name,
                    "cat": "measured",
                    "pid": PID[self.side],
                    "tid": sm * LANES + lane + 1,
                    "ts": begin / 1000,
                    "dur": max(end - begin - 1, 1) / 1000,
                    "args": {
                        "cta": int(cta),
                        "sm": sm,
                        "duration_us": round((end - begin) / 1000, 3),
                        "run": run,
                        "measured": True,
                        **({"ctas_shown": f"{len(shown)} of {starts.size}"} if starts.size > len(shown) else {}),
                    },
                }
            )
        return events

    def _lane(self, sm: int, begin: int, end: int) -> int:
        lanes = self._free.setdefault(sm, [])
        for lane, free in enumerate(lanes):
            if free <= begin:
                lanes[lane] = end
                return lane
        if len(lanes) < LANES:
            lanes.append(end)
            return len(lanes) - 1
        return LANES - 1  # more at once than any SM holds: the last lane takes the overlap

    def metadata(self) -> list[dict[str, Any]]:
        """The process and one named, ordered track per SM lane used."""
        if not self._free:
            return []
        pid = PID[self.side]
        events: list[dict[str, Any]] = [
            {"ph": "M", "name": "process_name", "pid": pid, "args": {"name": f"{self.label}: SMs, measured per CTA"}},
            {"ph": "M", "name": "process_sort_index", "pid": pid, "args": {"sort_index": pid}},
            {"ph": "M", "name": "process_labels", "pid": pid, "args": {"labels": NOTE}},
        ]
        for sm in sorted(self._free):
            for lane in range(len(self._free[sm])):
                tid = sm * LANES + lane + 1
                name = f"SM {sm}" if lane == 0 else f"SM {sm} #{lane + 1}"
                events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": name}})
                events.append(
                    {"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "args": {"sort_index": tid}}
                )
        return events


def _us(ns: float) -> float | None:
    """Microseconds to 3 places; None for a statistic not known (NaN, which JSON has no word for)."""
    return None if ns != ns else round(ns / 1000, 3)


def block_args(timeline: KernelTimeline | None) -> dict[str, Any]:
    """What a kernel's slice says of its block level (nothing when none was recorded)."""
    if timeline is None:
        return {}
    if timeline.refusal is not None:
        return {"block_level": f"refused: {timeline.refusal.code}: {timeline.refusal.detail}"}
    if not timeline.runs:
        return {"block_level": "no runs recorded"}
    s = timeline.stat
    overhead = timeline.overhead
    return {
        "block_level": {
            "measured_runs": len(timeline.runs),
            "ctas": timeline.runs[0].ctas,
            "sms_used": int(s("sms_used")),
            "waves": int(s("waves")),
            "most_ctas_per_sm": int(s("max_ctas_per_sm")),
            "most_at_once_per_sm": int(s("ctas_at_once")),
            "span_us": _us(s("span_ns")),
            "tail_us": _us(s("tail_ns")),
            "cta_p50_us": _us(s("cta_p50_ns")),
            "cta_p99_us": _us(s("cta_p99_ns")),
            "probe_overhead_pct": None if overhead is None or not math.isfinite(overhead) else round(100 * overhead, 1),
        }
    }
