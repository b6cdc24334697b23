"""The block-level records a capture holds (``Capture.sm_timeline``): what was measured per kernel,
the statistics of each run, and why a kernel has no timeline.

Each fusion record carries its own (``FusionRecord.sm_timeline``), so it goes wherever the record
goes (a subset, a round trip's merged replay). The CTA arrays themselves live in a safetensors file
beside the capture (:mod:`fusiondiff.io.timelines`); the JSON names that file and its sha256, so a file that was changed or belongs to another capture is
refused when it is read. The statistics here are derived from those arrays (:mod:`.block_stats`) when
the timeline is recorded and again when the arrays are read (they must agree): the differ needs
only the JSON, the views read the arrays.

Pure records: this module imports nothing from the rest of fusiondiff but the value rules of its
fields (:mod:`fusiondiff.records.constraints`), so the capture model can hold them without a circle.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from fusiondiff.records.constraints import Int64, NaNFloat

RefusalCode = Literal[
    "not_generated",
    "no_launch",
    "no_source",
    "instrument",
    "rebuild",
    "clone_differs",
    "compile",
    "not_instrumented",
    "missing_ctas",
    "overflow",
    "early_exit",
    "launch_differs",
    "outputs_differ",
    "overhead",
    "failed",
]
"""Why a kernel (or a fusion) has no timeline: ``not_generated``, a kernel nvFuser did not generate
(an ATen fill launched by the fusion); ``no_launch``, its grid or block was not recorded;
``no_source``, nvFuser gave no source for it; ``instrument``, the probe cannot go into its source
(it leaves through inline ``exit``); ``rebuild``, the fusion could not be built again from its
print; ``clone_differs``, the rebuilt fusion compiled other kernels than the recorded ones;
``compile``, the instrumented source did not compile or launch; ``not_instrumented``, nvFuser did
not compile the instrumented source; ``missing_ctas``, CTAs of the grid wrote no record;
``overflow``, the launch had more CTAs or warps than the recorded launch; ``early_exit``, warps
left past the probe's end; ``launch_differs``, the instrumented launch's grid or block is not the
recorded one; ``outputs_differ``, the instrumented run's outputs are not bit-identical to the plain
run's; ``overhead``, the instrumented kernel is slower than the threshold allows; ``failed``, any
other error while recording (its first line in the detail)."""


@dataclass(frozen=True)
class Refusal:
    """Why there is no timeline: a code, and the one line that says it for this kernel."""

    code: RefusalCode
    detail: str
    """What was seen (the error's first line, the counts), without the kernel's name."""


@dataclass(frozen=True)
class BlockStats:
    """One instrumented run of one kernel, summarised. Times in ns from the run's first CTA start."""

    ctas: Int64
    """CTAs that ran (the grid's CTA count)."""
    sms_used: Int64
    """SMs that ran at least one CTA."""
    max_ctas_per_sm: Int64
    """The most CTAs one SM ran in the run."""
    ctas_at_once: Int64
    """CTAs an SM held at once, as most SMs did: the median over the SMs used of each one's most
    CTAs at once (measured concurrency, not the occupancy limit). Not the largest: on the H200 a
    few SMs per run show CTA intervals overlapping by up to 300 ns more than they can hold (17 at
    once where registers allow 10), as if ``%globaltimer`` were read slightly out of step across
    the warps of one SM; the median over SMs is what the SMs could hold."""
    waves: Int64
    """Waves of the SM that needed most: its CTAs over :attr:`ctas_at_once`, rounded up."""
    span_ns: NaNFloat
    """First CTA start to last CTA end."""
    tail_ns: NaNFloat
    """The time the last 10 % of CTAs took: the last end less the end by which 90 % had ended."""
    start_skew_p50_ns: NaNFloat
    """Median CTA start, from the first start (CTAs of later waves start later by design)."""
    start_skew_p99_ns: NaNFloat
    first_start_p50_ns: NaNFloat
    """Median over SMs of when an SM started its first CTA, from the first start."""
    first_start_max_ns: NaNFloat
    """The latest first CTA start of any SM used: an SM held by other work starts late."""
    cta_p10_ns: NaNFloat
    """CTA durations (start of thread 0 to the last warp's end): 10th percentile."""
    cta_p50_ns: NaNFloat
    cta_p90_ns: NaNFloat
    cta_p99_ns: NaNFloat
    moved_ctas: Int64 = 0
    """CTAs whose SM at the end was not the SM at the start (preemption)."""


STAT_FIELDS = tuple(name for name in BlockStats.__dataclass_fields__ if name not in ("ctas", "moved_ctas"))
"""The statistics compared between sides (the counts of CTAs and moves are checks, not findings)."""


@dataclass(frozen=True)
class KernelTimeline:
    """The block level of one kernel of a fusion record: ``runs`` instrumented runs, or a refusal."""

    kernel: str
    """The launched name (``KernelRecord.name``)."""
    order: Int64
    """``KernelRecord.order``: position in launch order within one execution."""
    runs: tuple[BlockStats, ...] = ()
    """One summary per instrumented run; empty when refused."""
    refusal: Refusal | None = None
    warps_per_cta: Int64 = 0
    plain_median_ns: float | None = None
    """The plain kernel's median under the timing protocol (the record's samples)."""
    instrumented_median_ns: float | None = None
    """The instrumented kernel's median under the same protocol, in the same process."""
    registers_plain: Int64 | None = None
    """Registers per thread of the plain launch, as the kernel-record source reported them."""
    registers_instrumented: Int64 | None = None
    blocks_per_sm_plain: Int64 | None = None
    """Resident CTAs per SM the GPU's limits allow (derived occupancy) for the plain launch."""
    blocks_per_sm_instrumented: Int64 | None = None
    timer_resolution_ns: float | None = None
    """The smallest non-zero step between two CTA starts seen (the timer's resolution or coarser)."""
    arrays: str | None = None
    """Key prefix of this kernel's arrays in the timeline file (``f3.k1``)."""

    def __post_init__(self) -> None:
        if self.runs and self.runs[0].ctas < 1:
            raise ValueError("a measured kernel ran at least one CTA; this one says 0")

    @property
    def measured(self) -> bool:
        return self.refusal is None and bool(self.runs)

    @property
    def overhead(self) -> float | None:
        """Instrumented median over plain median, less one (0.06: 6 % slower); None when unknown."""
        if not self.plain_median_ns or self.instrumented_median_ns is None:
            return None
        return self.instrumented_median_ns / self.plain_median_ns - 1

    def stat(self, name: str) -> float:
        """The median over the runs of the statistic ``name`` (a field of :class:`BlockStats`)."""
        return float(statistics.median(getattr(run, name) for run in self.runs))

    def extremes(self, name: str) -> tuple[float, float]:
        """The smallest and the largest value of the statistic ``name`` over the runs: other work
        on the GPU can hold SMs in some runs only, which the median hides."""
        values = [float(getattr(run, name)) for run in self.runs]
        return min(values), max(values)


@dataclass(frozen=True)
class FusionTimeline:
    """The block level of one fusion record (``FusionRecord.sm_timeline``): its kernels' timelines,
    and the file of CTA arrays they are in."""

    runs: Int64
    """Instrumented runs per kernel, each after the protocol's L2 treatment."""
    kernels: tuple[KernelTimeline, ...] = ()
    outputs_identical: bool | None = None
    """The instrumented run's outputs were bit-identical to the plain run's on the same inputs
    (``None``: not compared, the fusion was refused before it ran)."""
    refusal: Refusal | None = None
    """Why the whole fusion has no timeline (it could not be rebuilt, its outputs differ...)."""
    file: str | None = None
    """The safetensors file holding the CTA arrays, relative to the capture's folder (None:
    nothing measured)."""
    sha256: str | None = None
    """sha256 of that file: a file changed since, or another capture's, is refused."""
    max_overhead: NaNFloat = 0.25
    """Instrumented kernels slower than the plain ones by more than this fraction were refused."""
    method: str = "globaltimer-smid-per-cta"
    """How the CTAs were measured: ``%globaltimer`` and ``%smid`` by a probe compiled into a copy of
    nvFuser's own source (:mod:`fusiondiff.replay.timeline_probe`)."""

    def check_grids(self, grids: Mapping[int, tuple[int, int, int] | None]) -> None:
        """Refuse a kernel whose runs count more CTAs than the grid recorded for its launch
        (``grids``: each kernel's grid by ``KernelRecord.order``; ``None`` where not reported):
        the probe writes one record per CTA of the grid, so more is a crafted or damaged record."""
        for kernel in self.kernels:
            grid = grids.get(kernel.order)
            if grid is None or not kernel.runs:
                continue
            launched = math.prod(grid)
            most = max(run.ctas for run in kernel.runs)
            if most > launched:
                raise ValueError(
                    f"kernel {kernel.order}'s timeline counts {most} CTAs, past the {launched} "
                    f"its grid {list(grid)} launches"
                )

    def kernel(self, order: int) -> KernelTimeline | None:
        """The timeline of the fusion's kernel ``order`` (``KernelRecord.order``), if recorded."""
        return next((k for k in self.kernels if k.order == order), None)

    @property
    def measured(self) -> tuple[KernelTimeline, ...]:
        return tuple(k for k in self.kernels if k.measured)
