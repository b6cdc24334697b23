"""Host time of a fusion's calls, kept apart from its kernels' device time (issue #27).

A fusion whose call takes longer on the host than its kernels take on the GPU keeps the GPU
waiting: the session is host-bound there, whatever the kernels' times say. Three host times are
recorded per fusion record (:class:`fusiondiff.records.conditions.HostTiming`):

- ``fd.execute`` in the timing protocol's warm-ups, on fusiondiff's copies: the same measurement on
  the live side and in a replay (:class:`WarmupClock`);
- the session's own ``fd.execute`` calls after the first (the first compiles);
- for Thunder, the region's call (``FusionDefinitionWrapper``: its cache lookup, input descriptors,
  then ``fd.execute``) after the first, from :meth:`SessionHostTimes.region`.

The recorder's own work inside a call (describing inputs, counting repeats) is measured and left
out, so a capture does not make the session look host-bound. Clocks are injected for tests.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from typing import Any

from fusiondiff.records.conditions import HostTiming, TimingConditions

MAX_CALLS = 200
"""Host times kept per record and kind (the first calls after the first; a step repeats them)."""

HOST_CALLS = 40
"""Calls timed on the host alone before the protocol's warm-ups. Host time per call varies by
several per cent from call to call: a host question judged on the four warm-ups after the first
cannot tell that from a difference, while forty more calls cost well under a millisecond each for
the small fusions where host time matters."""

Clock = Callable[[], int]


class WarmupClock:
    """``run_once`` for the timing protocol, timing the host part of its first ``warmups`` calls:
    the warm-ups, launched back to back with no profiler running. :meth:`host_calls` runs more
    such calls before them, timed the same way, for the host question's samples."""

    def __init__(self, run_once: Callable[[], object], warmups: int, clock: Clock = time.perf_counter_ns):
        self._run_once = run_once
        self._warmups = warmups
        self._clock = clock
        self.calls = 0
        self.host_ns: list[float] = []

    def host_calls(self, count: int) -> None:
        """``count`` calls back to back, each timed on the host, before the warm-ups (which are
        timed too): what a session's repeated calls do, with no profiler and no flush between."""
        for _ in range(count):
            start = self._clock()
            self._run_once()
            self.host_ns.append(float(self._clock() - start))

    def __call__(self) -> object:
        if self.calls >= self._warmups:
            return self._run_once()
        start = self._clock()
        result = self._run_once()
        self.host_ns.append(float(self._clock() - start))
        self.calls += 1
        return result

    @property
    def after_first(self) -> tuple[float, ...]:
        """The warm-ups' host times but the first (which can still fill caches)."""
        return tuple(self.host_ns[1:])


class SessionHostTimes:
    """The session's own calls, per record key: ``fd.execute`` and Thunder's region calls."""

    def __init__(self, clock: Clock = time.perf_counter_ns):
        self._clock = clock
        self._local = threading.local()
        self._lock = threading.Lock()
        self._execute: dict[Hashable, list[float]] = {}
        self._region: dict[Hashable, list[float]] = {}

    @property
    def clock(self) -> Clock:
        return self._clock

    def execute(self, key: Hashable | None, repeat: bool, host_ns: float, own_ns: float) -> None:
        """One ``fd.execute`` of the session: ``host_ns`` in nvFuser, ``own_ns`` in fusiondiff's
        work around it; only a repeat of a recorded execution counts (a first call compiles)."""
        self._local.own_ns = getattr(self._local, "own_ns", 0.0) + own_ns
        self._local.key = key if repeat else None
        if repeat and key is not None:
            self._keep(self._execute, key, host_ns)

    @contextlib.contextmanager
    def region(self) -> Iterator[None]:
        """Around one Thunder region call: its host time, less fusiondiff's work inside it, goes to
        the record its ``fd.execute`` counted as a repeat."""
        saved = (getattr(self._local, "own_ns", 0.0), getattr(self._local, "key", None))
        self._local.own_ns, self._local.key = 0.0, None
        start = self._clock()
        try:
            yield
        except BaseException:
            self._local.own_ns, self._local.key = saved
            raise
        elapsed = self._clock() - start - self._local.own_ns
        if self._local.key is not None:
            self._keep(self._region, self._local.key, float(elapsed))
        # an enclosing region (none in Thunder today) counts this one's fusiondiff work too
        self._local.own_ns, self._local.key = saved[0] + self._local.own_ns, saved[1]

    def _keep(self, table: dict[Hashable, list[float]], key: Hashable, value: float) -> None:
        with self._lock:
            kept = table.setdefault(key, [])
            if len(kept) < MAX_CALLS:
                kept.append(value)

    def with_host_times(self, record: Any, key: Hashable) -> Any:
        """``record`` (a ``FusionRecord``) with the session's host times of ``key`` in its conditions."""
        execute, region = tuple(self._execute.get(key, ())), tuple(self._region.get(key, ()))
        if not execute and not region:
            return record
        conditions = record.conditions or TimingConditions()
        host = conditions.host or HostTiming()
        host = dataclasses.replace(host, session_execute_ns=execute, session_call_ns=region)
        return dataclasses.replace(record, conditions=dataclasses.replace(conditions, host=host))
