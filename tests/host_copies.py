"""Derived copies of recorded captures, with as many host samples as a capture takes now.

The recordings in tests/data were made before the timing protocol timed its forty host calls:
each record holds four ``fd.execute`` warm-ups and a few of the session's own calls, too few for
the host question to be judged. A copy made here repeats each record's recorded host times
``repeat`` times in order (the four warm-ups become 44 samples with the same values and spread),
so that the host logic can be checked on a recording's own figures. It is a derived copy, never a
recording: the tests that use it say so.
"""

from __future__ import annotations

import dataclasses

from fusiondiff.records.model import Capture, FusionRecord


def _repeated(record: FusionRecord, repeat: int) -> FusionRecord:
    conditions = record.conditions
    if conditions is None or conditions.host is None:
        return record
    host = conditions.host
    host = dataclasses.replace(
        host,
        execute_ns=host.execute_ns * repeat,
        session_execute_ns=host.session_execute_ns * repeat,
        session_call_ns=host.session_call_ns * repeat,
    )
    return dataclasses.replace(record, conditions=dataclasses.replace(conditions, host=host))


def with_host_samples(capture: Capture, repeat: int = 21) -> Capture:
    """``capture`` with every record's host times repeated ``repeat`` times (21: a single session
    call becomes the 21 a host-bound verdict needs)."""
    return dataclasses.replace(capture, fusions=tuple(_repeated(f, repeat) for f in capture.fusions))
