"""What a finding is to its question's ledger (:data:`Status`): a value the ledger sets
(:func:`fusiondiff.diff.ledger.settle`) and every renderer reads, so that no format decides it again."""

from __future__ import annotations

from typing import Literal

Status = Literal[
    "cause", "joint", "evidence", "unexplained", "not_measured", "failure", "reported", "not_seen", "no_time"
]
"""What a finding is to its question's ledger, decided where the ledger is kept
(:func:`fusiondiff.diff.ledger.settle`) and read by every renderer: ``cause``, it alone takes a
share of the gap; ``joint``, it takes a share jointly with other causes (and maybe one alone:
``Finding.alone_ns``); ``evidence``, it follows from another finding that takes the share;
``unexplained``, the ledger's residual; ``not_measured``, it could take a share but its fusions'
times could not be judged; ``failure``, a side has no timing; ``reported``, a circumstance, never
counted; ``not_seen``, present without a sign that it acted; ``no_time``, a property that differs
and costs no measurable time."""
