"""Where a replay process spends its wall time: its phases (imports, CUDA context, the scripts with
nvFuser's compile at each fusion's first execute, the profiler's first window, each gate's wait, the
samples, writing), as wall-clock timestamps, so runs in several processes can be laid side by side.

Kept apart from the capture (the capture's timing data is what the diff reads; this is about the
process): one line in the replay's log, and ``<log stem>.phases.json`` beside it when asked for (a
round trip's replays). No torch here; :mod:`fusiondiff.replay.child` fills it in.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

PHASES_SUFFIX = ".phases.json"


def phases_path_for(log_file: str | os.PathLike[str]) -> Path:
    """The phases file beside a replay's log (``logs/0001_x.phases.json`` for ``logs/0001_x.log``)."""
    path = Path(log_file)
    return path.with_name(path.name.removesuffix(".log") + PHASES_SUFFIX)


class PhaseLog:
    """Wall-clock phases (``time.time()``, seconds since the epoch) and point events of one process.
    ``spawned_at`` is when the parent started the process (before the interpreter ran)."""

    def __init__(self, spawned_at: float | None = None, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.spawned_at = spawned_at
        self.entered_at = clock()
        """When the child's own code first ran: the interpreter's start is ``entered_at - spawned_at``."""
        self.phases: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = self.clock()
        try:
            yield
        finally:
            self.phases.append({"name": name, "start": start, "end": self.clock()})

    def add(self, name: str, start: float, end: float) -> None:
        """A phase timed elsewhere (in another thread), from ``start`` to ``end`` on :attr:`clock`."""
        self.phases.append({"name": name, "start": start, "end": end})

    def event(self, name: str) -> None:
        self.events.append({"name": name, "at": self.clock()})

    def seconds(self) -> dict[str, float]:
        """Each phase name's total seconds, in the order first seen (``interpreter`` first, when
        the spawn time is known)."""
        totals: dict[str, float] = {}
        if self.spawned_at is not None:
            totals["interpreter"] = max(self.entered_at - self.spawned_at, 0.0)
        for p in self.phases:
            totals[p["name"]] = totals.get(p["name"], 0.0) + p["end"] - p["start"]
        return totals

    def line(self) -> str:
        """One line for the log: ``replay child: phases (s): imports 4.41, cuda_context 0.55, ...``."""
        return "replay child: phases (s): " + ", ".join(f"{k} {v:.3f}" for k, v in self.seconds().items())

    def to_jsonable(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "spawned_at": self.spawned_at,
            "entered_at": self.entered_at,
            "ended_at": self.clock(),
            "phases": self.phases,
            "events": self.events,
            "seconds": self.seconds(),
        }

    def write(self, path: str | os.PathLike[str]) -> None:
        """Written atomically (never a half-written file, as a full disk would leave); a failure is
        an :class:`~fusiondiff.records.errors.OutputError` naming the file."""
        from fusiondiff.io.files import write_text

        write_text(path, json.dumps(self.to_jsonable(), indent=1))
