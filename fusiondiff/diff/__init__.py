"""The differ: given two captures of the same program (usually live and replay), say whether each
fusion runs at the same speed on both sides and rank what explains any gap.

``diff(a, b)`` pairs fusions (:mod:`.match`), compares every recorded property (:mod:`.compare`),
judges the timings from the raw samples (:mod:`.stats`), and runs one rule per cause
(:mod:`.findings`). The result is a :class:`DiffResult` of frozen records; renderers live in
:mod:`fusiondiff.report.formats.diff_text`.
"""

from fusiondiff.diff.core import diff
from fusiondiff.diff.records import (
    DiffResult,
    Finding,
    FusionPair,
    KernelPair,
    PropertyChange,
    TimingVerdict,
    UnmatchedFusion,
    UnmatchedKernel,
)

__all__ = [
    "DiffResult",
    "Finding",
    "FusionPair",
    "KernelPair",
    "PropertyChange",
    "TimingVerdict",
    "UnmatchedFusion",
    "UnmatchedKernel",
    "diff",
]
