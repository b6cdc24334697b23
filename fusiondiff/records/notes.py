"""What a capture's warnings say, as codes the differ acts on; and whether a capture is a round
trip's merged replay.

A warning is a line for people (``fusiondiff show`` prints it as it is). The differ acts on some of
them: a profiler that missed kernel events makes the numbers weak, while the communication
recorder's own trouble (:data:`fusiondiff.records.distributed.COMMUNICATION_NOT_RECORDED`) says nothing
about fusion time. :func:`note` gives a warning its code; it is the one place a warning's text is
read, for captures recorded before and after alike, so no rule matches words itself.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from fusiondiff.records.distributed import COMMUNICATION_NOT_RECORDED
from fusiondiff.records.model import Capture

ROUNDTRIP_SOURCE = "roundtrip of "
"""How ``Capture.source`` of a round trip's merged replay begins (``roundtrip of live.json: 5 script(s)``)."""

NoteCode = Literal["profiler_trouble", "communication_not_recorded", "other"]
"""``profiler_trouble``: the kernel-record source (CUPTI, a profiler) missed or lost kernel events;
``communication_not_recorded``: the session's collectives were not recorded (fusion time is not
concerned); ``other``: anything else (a fact about the capture, not about its numbers)."""

_PROFILER_TROUBLE = re.compile(r"cupti|kernel events?|no kernels?|missing kernel|profiler", re.IGNORECASE)


@dataclass(frozen=True)
class Note:
    """A warning with its code."""

    code: NoteCode
    text: str
    """The warning as recorded."""


@functools.lru_cache(maxsize=4096)
def note(warning: str) -> Note:
    """The warning with its code."""
    if warning.startswith(COMMUNICATION_NOT_RECORDED):
        return Note("communication_not_recorded", warning)
    if _PROFILER_TROUBLE.search(warning):
        return Note("profiler_trouble", warning)
    return Note("other", warning)


def notes(warnings: Sequence[str]) -> tuple[Note, ...]:
    """Each warning with its code, in order."""
    return tuple(note(w) for w in warnings)


def from_roundtrip(capture: Capture) -> bool:
    """A merged replay of ``fusiondiff roundtrip``: ``Capture.roundtrip``, or, in files written
    before that field, the ``source`` the round trip gave them (the one place that text is read)."""
    return capture.roundtrip or capture.source.startswith(ROUNDTRIP_SOURCE)
