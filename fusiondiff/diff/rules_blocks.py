"""Findings from the block level: how the kernels of a pair ran on the SMs, where both sides were
measured (``FusionRecord.sm_timeline``, :mod:`fusiondiff.records.blocks`).

Each rule compares one matched kernel's block statistics (the median over its instrumented runs)
on the side that is slower (the kernel's timing verdict; by measured span when the verdict is
SAME) against the other, and speaks only of what makes the slower side slower. Other work on the
GPU may hold SMs in a few runs only (seen on the H200: 2 of 5 runs on 52 SMs while a second stream
ran matmuls), so the two rules about it look at each run, the others at medians over the runs:

- ``blocks_fewer_sms``: in some run it used fewer SMs than the other side did in any (with the
  same grid, the machine held SMs: other work, a partition);
- ``blocks_starts_delayed``: in some run an SM started its first CTA late: SMs held by other work;
- ``blocks_extra_wave``: its busiest SM needed more waves (fewer CTAs fit at once, or more CTAs);
- ``blocks_tail``: the last 10 % of its CTAs took longer;
- ``blocks_every_cta_slower``: its whole CTA-duration distribution moved: the work itself;
- ``blocks_few_ctas_slower``: its median CTA is unchanged but its slowest CTAs are much slower:
  imbalance or contention.

They describe how the time went, not why: the causal model (:mod:`fusiondiff.diff.causes`) gives
them no share of a gap. The evidence is numbers with units (:class:`~fusiondiff.diff.records.Evidence`); the sentences are
:mod:`fusiondiff.report.words.wording`'s. The thresholds are set above what two runs of one kernel
differ by (``tests/data/blocks/same_kernel``: CTA median 3 %, p99 10 %, tail 7 %, first starts
30 ns apart) and are module constants, so they can be read and tested.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

from fusiondiff.diff.context import RuleContext, kernel_label, make_finding
from fusiondiff.diff.records import Evidence, Finding, FusionPair, KernelPair, Unit
from fusiondiff.records.blocks import KernelTimeline

CTA_SHIFT = 0.10
"""Every CTA slower: p10, median and p90 all at least 10 % longer."""
FEW_SLOWER = 0.30
"""A few CTAs slower: p99 at least 30 % longer while the median moved less than :data:`CTA_SHIFT`."""
TAIL_RATIO = 1.5
"""A tail: the last 10 % of CTAs took at least 1.5 times as long ..."""
TAIL_SHARE = 0.10
"""... and at least 10 % of the slower side's span."""
DELAY_NS = 2000.0
"""Starts delayed: the latest first CTA start of an SM at least 2 us later ..."""
DELAY_SHARE = 0.10
"""... and at least 10 % of the other side's span later."""

_UNITS: dict[str, Unit] = {
    "ctas": "count",
    "sms_used": "count",
    "waves": "count",
    "max_ctas_per_sm": "count",
    "ctas_at_once": "count",
}
"""Units of the statistics that are counts; every other one is a time in ns."""


@dataclass(frozen=True)
class _Kernel:
    """One matched kernel whose two sides were both measured, oriented: ``slow`` is the slower side."""

    pair: FusionPair
    kernel: KernelPair
    a: KernelTimeline
    b: KernelTimeline
    slow_is_b: bool

    def slow(self, name: str) -> float:
        return (self.b if self.slow_is_b else self.a).stat(name)

    def fast(self, name: str) -> float:
        return (self.a if self.slow_is_b else self.b).stat(name)

    def runs(self, name: str, slow: bool) -> list[float]:
        side = self.b if self.slow_is_b == slow else self.a
        return [float(getattr(run, name)) for run in side.runs]

    def evidence(self, *names: str) -> tuple[Evidence, ...]:
        return tuple(Evidence(name, self.a.stat(name), self.b.stat(name), _UNITS.get(name, "ns")) for name in names)

    def finding(self, rule: str, *names: str) -> Finding:
        return make_finding(rule, self.evidence(*names), [self.pair.label], [kernel_label(self.pair, self.kernel)])


def measured_kernels(ctx: RuleContext) -> Iterator[_Kernel]:
    """Every matched kernel measured on both sides, with its slower side."""
    for pair, ta, tb in ctx.timelines:
        for kernel in pair.kernels:
            a, b = ta.kernel(kernel.order_a), tb.kernel(kernel.order_b)
            if a is None or b is None or not (a.measured and b.measured):
                continue
            verdict = kernel.timing.verdict
            slow_is_b = verdict == "SLOWER" or (
                verdict not in ("SLOWER", "FASTER") and b.stat("span_ns") > a.stat("span_ns")
            )
            yield _Kernel(pair, kernel, a, b, slow_is_b)


def blocks_fewer_sms(ctx: RuleContext) -> Iterator[Finding]:
    for k in measured_kernels(ctx):
        fewest = min(k.runs("sms_used", slow=False))
        below = [n for n in k.runs("sms_used", slow=True) if n < fewest]
        if below:
            finding = k.finding("blocks_fewer_sms", "sms_used", "ctas")
            counts = {side: _runs_below(k, side, "sms_used") for side in ("A", "B")}
            extra = (
                Evidence("sms_used_min", k.a.extremes("sms_used")[0], k.b.extremes("sms_used")[0], "count"),
                Evidence("runs_with_fewer_sms", counts["A"], counts["B"], "count"),
            )
            yield dataclasses.replace(finding, data=extra + finding.data)


def _runs_below(k: _Kernel, side: str, name: str) -> float:
    """Runs of ``side`` whose ``name`` is below the other side's smallest."""
    mine, other = (k.a, k.b) if side == "A" else (k.b, k.a)
    floor = other.extremes(name)[0]
    return float(sum(1 for run in mine.runs if getattr(run, name) < floor))


def blocks_starts_delayed(ctx: RuleContext) -> Iterator[Finding]:
    for k in measured_kernels(ctx):
        slow, fast = (k.b, k.a) if k.slow_is_b else (k.a, k.b)
        late = slow.extremes("first_start_max_ns")[1] - fast.extremes("first_start_max_ns")[1]
        if late >= DELAY_NS and late >= DELAY_SHARE * k.fast("span_ns"):
            finding = k.finding("blocks_starts_delayed", "first_start_max_ns", "first_start_p50_ns", "sms_used")
            latest = Evidence(
                "first_start_max_ns_max",
                k.a.extremes("first_start_max_ns")[1],
                k.b.extremes("first_start_max_ns")[1],
                "ns",
            )
            yield dataclasses.replace(finding, data=(latest, *finding.data))


def blocks_extra_wave(ctx: RuleContext) -> Iterator[Finding]:
    for k in measured_kernels(ctx):
        if min(k.runs("waves", slow=True)) > max(k.runs("waves", slow=False)):
            yield k.finding("blocks_extra_wave", "waves", "ctas_at_once", "max_ctas_per_sm", "ctas")


def blocks_tail(ctx: RuleContext) -> Iterator[Finding]:
    for k in measured_kernels(ctx):
        slow, fast = k.slow("tail_ns"), k.fast("tail_ns")
        if slow >= TAIL_RATIO * fast and slow >= TAIL_SHARE * k.slow("span_ns") and slow > fast:
            yield k.finding("blocks_tail", "tail_ns", "span_ns")


def _longer(k: _Kernel, name: str, by: float) -> bool:
    return k.slow(name) >= (1 + by) * k.fast(name)


def blocks_every_cta_slower(ctx: RuleContext) -> Iterator[Finding]:
    for k in measured_kernels(ctx):
        if all(_longer(k, name, CTA_SHIFT) for name in ("cta_p10_ns", "cta_p50_ns", "cta_p90_ns")):
            yield k.finding("blocks_every_cta_slower", "cta_p10_ns", "cta_p50_ns", "cta_p90_ns")


def blocks_few_ctas_slower(ctx: RuleContext) -> Iterator[Finding]:
    for k in measured_kernels(ctx):
        median_moved = abs(k.slow("cta_p50_ns") - k.fast("cta_p50_ns")) >= CTA_SHIFT * k.fast("cta_p50_ns")
        if not median_moved and _longer(k, "cta_p99_ns", FEW_SLOWER):
            yield k.finding("blocks_few_ctas_slower", "cta_p50_ns", "cta_p90_ns", "cta_p99_ns")
