"""The words of the report document beyond each question's line and each finding's title and
evidence: what a finding explains (its status, :data:`~fusiondiff.diff.records.Status`, in words),
the fusion table's legend, the note where nothing was found and the closing line of a document.
Every format takes them from the document (:mod:`fusiondiff.report.views.document`), which takes
them from here."""

from __future__ import annotations

from collections.abc import Callable

from fusiondiff.diff.ledger import status_of
from fusiondiff.diff.records import Finding, Status
from fusiondiff.records.units import duration

P_VALUE_DASH = "- where nothing was measured"
"""What a ``-`` in the floor column means, in every report."""

LEGEND = (
    "B/A: B's median over A's (above 1: B is slower); floor: the smallest gap (log ratio) these data can show "
    f"between two processes, SAME within it, {P_VALUE_DASH}"
)
"""What the columns of the terminal's fusion table mean."""

NO_FINDING = "No finding: no recorded property differs in a way a rule explains."
"""What a document says where the diff has no finding at all."""


def footer(version: str) -> str:
    """The closing line of a document: what its numbers are and how to read its columns."""
    return (
        f"fusiondiff {version}: medians of per-sample device durations, in the unit each column names; "
        "floor: the smallest gap these data can show between two processes, SAME within it "
        f"({P_VALUE_DASH}); B/A above 1 means B is slower."
    )


def explains_text(f: Finding) -> str:
    """What a finding explains, in words, as its status (:func:`~fusiondiff.diff.ledger.status_of`)
    says: its share of the gap (the part alone and the part joint, with whom), the finding it is
    evidence for, the gap nothing took, or nothing."""
    status = status_of(f)
    if status == "unexplained":
        if f.explained_ns > 0:
            return f"{duration(f.explained_ns)} unexplained"
        kernels = [e for e in f.data if e.field == "kernel_median_ns"]
        gap = sum(abs((e.on("B") or 0.0) - (e.on("A") or 0.0)) for e in kernels)
        return f"kernels {duration(gap)} apart inside a fusion of the same speed, counted in no gap"
    return _STATUS_WORDS[status](f)


def _joint_text(f: Finding) -> str:
    """``explains 194.6 us alone and 5.50 us jointly with index_value_range``: its own part and
    the part it shares, each said once."""
    shared = f.explained_ns - f.alone_ns
    with_whom = f"jointly with {', '.join(f.joint_with)}"
    if f.alone_ns > 0 and shared > 0:
        return f"explains {duration(f.alone_ns)} alone and {duration(shared)} {with_whom}"
    return f"explains {duration(f.explained_ns)} {with_whom}"


_STATUS_WORDS: dict[Status, Callable[[Finding], str]] = {
    "cause": lambda f: f"explains {duration(f.explained_ns)}",
    "joint": _joint_text,
    "evidence": lambda f: "evidence for " + ", ".join(f"#{r}" for r in f.caused_by),
    "failure": lambda f: "no timing on the failed side",
    "reported": lambda f: "reported, not counted in a gap",
    "not_seen": lambda f: "not seen acting: counted in no gap",
    "not_measured": lambda f: "its fusions' times not measured: counted in no gap",
    "no_time": lambda f: "explains no measurable time",
    "unexplained": lambda f: f"{duration(f.explained_ns)} unexplained",
}
"""Each status in words (the unexplained one is worded above, with its kernels' gap)."""
