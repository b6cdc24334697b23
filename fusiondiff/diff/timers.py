"""Reconciling two recordings of the same fusions taken with different timers (``--timer both``).

CUPTI takes one subscriber per process, so Kineto and nvFuser's ``PythonProfiler`` never measure in
the same process: each timer records its own capture (``fusiondiff replay --timer both`` runs the
replay twice, in two child processes), and this module says whether the two agree: the same kernels
(by normalized name, in launch order), the same launch configurations, and medians within a
tolerance. Every disagreement is kept, as data (:class:`Disagreement`); nothing is averaged away.
:mod:`fusiondiff.report.formats.timers_text` words them. No torch needed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Literal

from fusiondiff.diff.compare import LAUNCH_FIELDS
from fusiondiff.diff.match import match_kernels
from fusiondiff.diff.records import Side
from fusiondiff.records.model import NVFUSER, Capture, FusionRecord, KernelRecord, LaunchConfig, TimerName

DEFAULT_TOLERANCE = 0.05
"""Relative difference of two medians still called agreement (5 %)."""

LaunchValue = tuple[int, ...] | int
"""A value of a launch field: a grid, block or cluster, or a count of bytes or registers."""


@dataclass(frozen=True)
class LaunchDifference:
    """A launch field both timers report, with different values."""

    field: str
    """The :class:`~fusiondiff.records.model.LaunchConfig` field (``block``)."""
    a: LaunchValue
    b: LaunchValue


DisagreementKind = Literal["launch", "kernel_median", "only_one_side", "failed", "fusion_median"]
"""What two timers disagree on: a kernel's launch field, a kernel's median, a kernel only one side
saw, a fusion that failed on one side, or the fusion's median."""


@dataclass(frozen=True)
class Disagreement:
    """One thing two timers' recordings of a fusion disagree on."""

    kind: DisagreementKind
    kernel: str | None = None
    """Normalized name of the kernel concerned; ``None`` for the fusion itself."""
    launch: LaunchDifference | None = None
    """For ``launch``: the field and both values."""
    median_a_ns: float | None = None
    """For ``kernel_median`` and ``fusion_median``: the two medians (ns), more than the tolerance apart."""
    median_b_ns: float | None = None
    side: Side | None = None
    """For ``only_one_side``: the side that saw the kernel."""
    failure: str | None = None
    """For ``failed``: the failure's one-line message."""
    without_outside: bool = False
    """For ``fusion_median``: the medians leave out kernels nvFuser did not generate."""


@dataclass(frozen=True)
class KernelAgreement:
    """One kernel as both timers saw it."""

    name: str
    """Normalized kernel name (``nvfuser_inner_persistent_g0``)."""
    median_a_ns: float
    median_b_ns: float
    launch_differences: tuple[LaunchDifference, ...]
    """Fields one timer does not report are not compared."""

    @property
    def ratio(self) -> float:
        return self.median_b_ns / self.median_a_ns if self.median_a_ns else float("nan")


@dataclass(frozen=True)
class FusionAgreement:
    """One fusion recorded by both timers."""

    name: str
    median_a_ns: float
    median_b_ns: float
    kernels: tuple[KernelAgreement, ...]
    only_a: tuple[str, ...]
    """Kernels only timer A saw (normalized names)."""
    only_b: tuple[str, ...]
    disagreements: tuple[Disagreement, ...]
    """Empty when the timers agree on this fusion."""
    outside_nvfuser: tuple[tuple[str, float], ...] = ()
    """Kernels only the Kineto side saw that nvFuser did not generate (an ATen fill of an output
    buffer, launched while the fusion ran), with their medians (ns): nvFuser's ``PythonProfiler``
    reports only nvFuser's own kernels, so these are explained, not disagreements, and the fusion
    medians are compared without them."""

    @property
    def ratio(self) -> float:
        return self.median_b_ns / self.median_a_ns if self.median_a_ns else float("nan")


@dataclass(frozen=True)
class Reconciliation:
    """Two timers' recordings of the same fusions, side by side."""

    timer_a: TimerName
    timer_b: TimerName
    tolerance: float
    fusions: tuple[FusionAgreement, ...]
    unmatched_a: tuple[str, ...]
    """Fusions only A recorded (names)."""
    unmatched_b: tuple[str, ...]

    @property
    def agree(self) -> bool:
        return not self.unmatched_a and not self.unmatched_b and not any(f.disagreements for f in self.fusions)


def _key(f: FusionRecord) -> Hashable:
    return (f.structure_hash, f.input_signature)


def _timer_of(capture: Capture) -> TimerName:
    timers = {f.timing.timer for f in capture.fusions if f.timing.count}
    return timers.pop() if len(timers) == 1 else capture.protocol.method


def launch_differences(a: LaunchConfig, b: LaunchConfig) -> tuple[LaunchDifference, ...]:
    """Launch fields that differ where both timers report them."""
    found = []
    for name in LAUNCH_FIELDS:
        va, vb = getattr(a, name), getattr(b, name)
        if va is not None and vb is not None and va != vb:
            found.append(LaunchDifference(name, va, vb))
    return tuple(found)


def _relative(a: float, b: float) -> float:
    """How far apart two medians are, relative to A's; infinite when only one side has samples (a
    fusion kept untimed): no samples is never within the tolerance."""
    if a != a or b != b:  # NaN: no samples on that side
        return 0.0 if a != a and b != b else float("inf")
    return abs(b - a) / a if a else (0.0 if a == b else float("inf"))


def _outside_nvfuser(kernels: tuple[KernelRecord, ...], positions: list[int]) -> tuple[list[int], list[int]]:
    """Split unpaired kernel positions into (not nvFuser's, nvFuser's): a kernel record has a
    scheduler only when nvFuser generated it (parsed from its name when it was recorded)."""
    outside = [i for i in positions if kernels[i].scheduler is None]
    return outside, [i for i in positions if i not in outside]


def reconcile_fusion(
    a: FusionRecord,
    b: FusionRecord,
    tolerance: float = DEFAULT_TOLERANCE,
    nvfuser_side: str | None = None,
) -> FusionAgreement:
    """Compare one fusion's two recordings: kernels, launch configurations, medians.

    ``nvfuser_side`` (``"a"`` or ``"b"``) names the recording taken with nvFuser's profiler: the
    kernels only the other side saw that nvFuser did not generate are explained
    (:attr:`FusionAgreement.outside_nvfuser`), and left out of the fusion medians' comparison."""
    match = match_kernels(a.kernels, b.kernels)
    kernels: list[KernelAgreement] = []
    found: list[Disagreement] = []
    for i, j in match.pairs:
        ka, kb = a.kernels[i], b.kernels[j]
        kernels.append(_kernel(ka, kb))
        name = ka.normalized_name
        found += [Disagreement("launch", name, launch=d) for d in kernels[-1].launch_differences]
        if _relative(ka.timing.median_ns, kb.timing.median_ns) > tolerance:
            found.append(
                Disagreement("kernel_median", name, median_a_ns=ka.timing.median_ns, median_b_ns=kb.timing.median_ns)
            )
    only_a_positions, only_b_positions = list(match.only_a), list(match.only_b)
    outside: list[KernelRecord] = []
    if nvfuser_side == "b":
        apart, only_a_positions = _outside_nvfuser(a.kernels, only_a_positions)
        outside = [a.kernels[i] for i in apart]
    elif nvfuser_side == "a":
        apart, only_b_positions = _outside_nvfuser(b.kernels, only_b_positions)
        outside = [b.kernels[j] for j in apart]
    only_a = tuple(a.kernels[i].normalized_name for i in only_a_positions)
    only_b = tuple(b.kernels[j].normalized_name for j in only_b_positions)
    found += [Disagreement("only_one_side", name, side="A") for name in only_a]
    found += [Disagreement("only_one_side", name, side="B") for name in only_b]
    extra_ns = sum(k.timing.median_ns for k in outside)
    median_a = a.timing.median_ns - (extra_ns if nvfuser_side == "b" else 0.0)
    median_b = b.timing.median_ns - (extra_ns if nvfuser_side == "a" else 0.0)
    failure = a.failure or b.failure
    if failure is not None:
        found.append(Disagreement("failed", failure=failure.message))
    elif _relative(median_a, median_b) > tolerance:
        found.append(
            Disagreement("fusion_median", median_a_ns=median_a, median_b_ns=median_b, without_outside=bool(outside))
        )
    return FusionAgreement(
        name=a.name,
        median_a_ns=a.timing.median_ns,
        median_b_ns=b.timing.median_ns,
        kernels=tuple(kernels),
        only_a=only_a,
        only_b=only_b,
        disagreements=tuple(found),
        outside_nvfuser=tuple((k.name, k.timing.median_ns) for k in outside),
    )


def _kernel(ka: KernelRecord, kb: KernelRecord) -> KernelAgreement:
    return KernelAgreement(
        name=ka.normalized_name,
        median_a_ns=ka.timing.median_ns,
        median_b_ns=kb.timing.median_ns,
        launch_differences=launch_differences(ka.launch, kb.launch),
    )


def reconcile(a: Capture, b: Capture, tolerance: float = DEFAULT_TOLERANCE) -> Reconciliation:
    """Pair the fusions of two recordings (same definition structure and input signature, in
    order) and compare each pair; fusions without a partner are listed."""
    if tolerance < 0:
        raise ValueError("tolerance must not be negative")
    waiting: dict[Hashable, list[FusionRecord]] = defaultdict(list)
    for f in b.fusions:
        waiting[_key(f)].append(f)
    timer_a, timer_b = _timer_of(a), _timer_of(b)
    nvfuser_side = "b" if timer_b == NVFUSER != timer_a else "a" if timer_a == NVFUSER != timer_b else None
    fusions, unmatched_a = [], []
    for f in a.fusions:
        partners = waiting.get(_key(f))
        if partners:
            fusions.append(reconcile_fusion(f, partners.pop(0), tolerance, nvfuser_side))
        else:
            unmatched_a.append(f.name)
    unmatched_b = [f.name for left in waiting.values() for f in left]
    return Reconciliation(
        timer_a=timer_a,
        timer_b=timer_b,
        tolerance=tolerance,
        fusions=tuple(fusions),
        unmatched_a=tuple(unmatched_a),
        unmatched_b=tuple(unmatched_b),
    )
