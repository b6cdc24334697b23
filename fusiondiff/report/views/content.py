"""What the Markdown and HTML reports show, worked out once: rows and text blocks, no markup.

Both documents carry the same content (verdict, ranked findings, the fusion and kernel table, both
environments side by side, recorded differences, unified diffs of definitions and CUDA sources);
only the markup differs. Times stay in nanoseconds here; a table's unit is chosen for its column
(:func:`timing_column`, :class:`fusiondiff.records.units.Column`).
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from fusiondiff.diff.clocks import is_idle, max_clock_mhz, timed_clock
from fusiondiff.diff.records import Finding, FusionPair, PropertyChange, TimingVerdict
from fusiondiff.diff.rules_setup import CLOCK_TOLERANCE
from fusiondiff.records import limits
from fusiondiff.records.environment import PeakBandwidth
from fusiondiff.records.model import Capture, KernelRecord, LaunchConfig, TensorMeta
from fusiondiff.records.units import Column, duration, floor_cell, p_value, ratio  # noqa: F401 - renderers read them from here
from fusiondiff.report.interface import DiffReport
from fusiondiff.report.layout import cut
from fusiondiff.report.views.text_diffs import (  # noqa: F401 - renderers read them from here
    NAME_BLIND_NOTE,
    TextDiff,
    definition_diffs,
    source_diffs,
    unified,
)
from fusiondiff.report.words.paths import scrub_paths, scrubbed_evidence, short_list  # noqa: F401 - renderers read it from here, scrubbed_evidence
from fusiondiff.report.words.report_words import P_VALUE_DASH  # noqa: F401 - renderers read it from here

MAX_PROPERTY_ROWS = limits.PROPERTY_ROWS
"""Recorded differences listed in a document; the diff record holds all of them."""


def dims(d: tuple[int, ...] | None) -> str:
    return "-" if d is None else "x".join(str(v) for v in d)


def launch_parts(launch: LaunchConfig) -> list[str]:
    """``["grid 4096x1x1", "block 512x1x1", "31 regs", "smem 256 B"]`` (what is known of it)."""
    parts = [f"grid {dims(launch.grid)}", f"block {dims(launch.block)}"]
    if launch.registers_per_thread is not None:
        parts.append(f"{launch.registers_per_thread} regs")
    if launch.shared_mem_bytes is not None:
        parts.append(f"smem {launch.shared_mem_bytes} B")
    if launch.cluster and any(v > 1 for v in launch.cluster):
        parts.append(f"cluster {dims(launch.cluster)}")
    return parts


def launch_text(launch: LaunchConfig) -> str:
    """``grid 4096x1x1, block 512x1x1, 31 regs, smem 256 B``."""
    return ", ".join(launch_parts(launch))


def input_text(t: TensorMeta) -> str:
    """``bfloat16[4, 1024, 4096] offset 1, align 2 B`` (strides only when not contiguous)."""
    if t.kind == "scalar":
        return f"{t.dtype} = {t.scalar_value}"
    text = f"{t.dtype.replace('torch.', '')}[{', '.join(str(s) for s in t.shape)}]"
    if not t.is_contiguous:
        text += f" stride ({', '.join(str(s) for s in t.stride)})"
    if t.storage_offset:
        text += f" offset {t.storage_offset}"
    text += f", align {t.alignment_bytes} B"
    if t.min_value is not None:
        text += f", values {t.min_value:g}..{t.max_value:g}"
    return text


def value_text(value: Any) -> str:
    """A recorded value as a short string (``None`` as ``unset``)."""
    if value is None:
        return "unset"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(value_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "{}"
    if isinstance(value, str) and _HASH.fullmatch(value):
        return value[:12] + "…"
    return str(value)


_HASH = re.compile(r"[0-9a-f]{32,}")
"""A sha256 (source, definition): its first 12 digits tell two apart in a report."""


@dataclass(frozen=True)
class SideRow:
    """One line of the side-by-side table of the two captures."""

    name: str
    a: str
    b: str
    differs: bool


def sides(report: DiffReport) -> list[SideRow]:
    """Which files, what ran, where and when: the two captures side by side."""
    a, b = report.a, report.b
    rows = [
        ("capture file", report.path_a or "-", report.path_b or "-"),
        ("kind", a.kind, b.kind),
        ("what ran", short_list(scrub_paths(a.source)) or "-", short_list(scrub_paths(b.source)) or "-"),
        ("recorded at", a.environment.recorded_at or "-", b.environment.recorded_at or "-"),
        ("fusions recorded", str(len(a.fusions)), str(len(b.fusions))),
    ]
    return [SideRow(name, va, vb, False) for name, va, vb in rows]


_ENVIRONMENT_SHOWN = (
    ("GPU", "gpu_name", ""),
    ("compute capability", "compute_capability", ""),
    ("SMs", "sm_count", ""),
    ("L2", "l2_bytes", "MiB"),
    ("SM clock at start", "sm_clock_mhz", "MHz"),
    ("max SM clock", "max_sm_clock_mhz", "MHz"),
    ("memory clock", "memory_clock_mhz", "MHz"),
    ("DRAM peak (measured)", "peak_bandwidth", ""),
    ("driver", "driver_version", ""),
    ("CUDA", "cuda_version", ""),
    ("torch", "torch_version", ""),
    ("nvFuser", "nvfuser_version", ""),
    ("Thunder", "thunder_version", ""),
    ("Python", "python_version", ""),
    ("fusiondiff", "fusiondiff_version", ""),
    ("NVFUSER_* variables", "nvfuser_env", ""),
    ("CUDA and PyTorch variables", "runtime_env", ""),
)
_PROTOCOL_SHOWN = (
    ("timing method", "method", ""),
    ("warm-up runs", "warmup", ""),
    ("samples", "samples", ""),
    ("L2 before each sample", "l2_mode", ""),
    ("L2 flush buffer", "flush_bytes", "MiB"),
    ("timed on input copies", "on_copies", ""),
)


def _with_unit(value: Any, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "MiB":
        return f"{value / 2**20:.0f} MiB"
    if unit:
        return f"{value} {unit}"
    return value_text(value) if value != {} else "none"


def _clock_text(mhz: float | None, idle: tuple[int, ...]) -> str:
    left_out = f"idle readings left out: {', '.join(map(str, idle[:3]))} MHz" if idle else ""
    if mhz is None:
        return f"not known ({left_out})" if left_out else "-"
    return f"{mhz:.0f} MHz" + (f" ({left_out})" if left_out else "")


def _clock_rows(report: DiffReport) -> list[SideRow]:
    """The SM clock at the start and while timing, an idle reading labelled so (read while no kernel
    ran, it says nothing of the samples: :mod:`fusiondiff.diff.clocks`)."""
    limit = max_clock_mhz(report.a, report.b)
    start = [c.environment.sm_clock_mhz for c in (report.a, report.b)]
    shown = ["-" if v is None else f"{v} MHz" + (" (idle)" if is_idle(v, limit) else "") for v in start]
    ca, cb = timed_clock(report.a, limit), timed_clock(report.b, limit)
    apart = ca.mhz is not None and cb.mhz is not None and abs(ca.mhz - cb.mhz) > CLOCK_TOLERANCE * max(ca.mhz, cb.mhz)
    return [
        SideRow("SM clock at start", shown[0], shown[1], False),
        SideRow("SM clock while timing", _clock_text(ca.mhz, ca.idle), _clock_text(cb.mhz, cb.idle), apart),
    ]


PEAKS_APART = 0.05
"""Two measured peaks more than 5 % apart are marked as differing (one GPU's copies vary by about 1 %)."""


def _peak_row(name: str, a: PeakBandwidth | None, b: PeakBandwidth | None) -> SideRow:
    """The GPU's measured DRAM peak (:mod:`fusiondiff.records.traffic`): a measurement, marked as
    differing only when the two are further apart than one GPU's copies vary."""
    shown = [
        "not measured" if p is None else f"{p.gbs:.0f} GB/s (a {p.copy_bytes / 2**20:.0f} MiB copy)" for p in (a, b)
    ]
    apart = a is not None and b is not None and abs(a.gbs - b.gbs) > PEAKS_APART * max(a.gbs, b.gbs)
    return SideRow(name, shown[0], shown[1], apart)


def _runtime_rows(name: str, a: dict[str, str] | None, b: dict[str, str] | None) -> list[SideRow]:
    """The CUDA and PyTorch variables' row: none where neither capture recorded them (captures
    written before they were read), ``not recorded`` on a side that did not, never a difference."""
    if a is None and b is None:
        return []
    shown = ["not recorded" if v is None else value_text(v) for v in (a, b)]
    return [SideRow(name, shown[0], shown[1], a is not None and b is not None and a != b)]


def environment_rows(report: DiffReport) -> list[SideRow]:
    """Both environments and timing protocols, property by property (host names left out: they
    say nothing about speed and are the recording machine's); the SM clock at the start and while
    timing, idle readings labelled and not counted as a difference."""
    rows = []
    for shown, record_a, record_b in (
        (_ENVIRONMENT_SHOWN, report.a.environment, report.b.environment),
        (_PROTOCOL_SHOWN, report.a.protocol, report.b.protocol),
    ):
        for name, field, unit in shown:
            if field == "sm_clock_mhz":
                rows += _clock_rows(report)
                continue
            if field == "peak_bandwidth":
                rows.append(_peak_row(name, report.a.environment.peak_bandwidth, report.b.environment.peak_bandwidth))
                continue
            va, vb = getattr(record_a, field), getattr(record_b, field)
            if field == "runtime_env":
                rows += _runtime_rows(name, va, vb)
                continue
            rows.append(SideRow(name, _with_unit(va, unit), _with_unit(vb, unit), va != vb))
    return rows


@dataclass(frozen=True)
class TimingRow:
    """One line of the fusion and kernel table."""

    fusion: str
    kernel: str | None
    """``None`` for the fusion's own line."""
    timing: TimingVerdict | None
    """``None`` for a kernel launched on one side only."""
    launch_a: str
    launch_b: str
    note: str = ""
    parts_a: tuple[str, ...] = ()
    """The launch configuration in parts (:func:`launch_parts`), for documents that mark what differs."""
    parts_b: tuple[str, ...] = ()
    """What else differs: launch fields, source, ``only in A``."""


def _kernel_note(changes: tuple[PropertyChange, ...]) -> str:
    return ", ".join(sorted({c.path.split(".")[-1].replace("source_hash", "CUDA source") for c in changes}))


def timing_rows(report: DiffReport, limit: int | None = None) -> list[TimingRow]:
    """Per matched fusion its line, then its kernels' lines (matched ones, then one-sided ones):
    the first ``limit`` of them (all with None; :func:`timing_rows_left_out` says the rest)."""
    return list(itertools.islice(_timing_rows(report), limit))


def timing_row_count(report: DiffReport) -> int:
    """The rows :func:`timing_rows` gives without a limit, counted without making them."""
    return sum(1 + len(p.kernels) + len(p.unmatched_kernels) for p in report.result.pairs)


def timing_rows_left_out(report: DiffReport, shown: int) -> str:
    """The sentence that says how many timing rows a document left out ("" when none)."""
    total = timing_row_count(report)
    if total <= shown:
        return ""
    return (
        f"{total - shown} more row(s) of {total} left out (a report shows the first {limits.TIMING_ROWS}): "
        "--fusion or --top narrows it to the fusions asked for; the JSON record (--format json) holds every one."
    )


def _timing_rows(report: DiffReport) -> Iterator[TimingRow]:
    for pair in report.result.pairs:
        fa, fb = report.fusion_a(pair), report.fusion_b(pair)
        inputs = "inputs differ" if any(c.category == "inputs" for c in pair.changes) else ""
        counts = (
            ("", "")
            if len(fa.kernels) == len(fb.kernels)
            else (f"{len(fa.kernels)} kernel(s)", f"{len(fb.kernels)} kernel(s)")
        )
        yield TimingRow(pair.label, None, pair.timing, *counts, inputs)
        for kernel in pair.kernels:
            ka, kb = report.kernel_records(pair, kernel)
            yield TimingRow(
                pair.label,
                kernel.normalized_name,
                kernel.timing,
                launch_text(ka.launch),
                launch_text(kb.launch),
                _kernel_note(kernel.changes),
                tuple(launch_parts(ka.launch)),
                tuple(launch_parts(kb.launch)),
            )
        for only in pair.unmatched_kernels:
            record = _kernel_on(report, pair, only.side, only.order)
            launch = launch_text(record.launch) if record else "-"
            yield TimingRow(
                pair.label,
                only.normalized_name,
                None,
                launch if only.side == "A" else "-",
                launch if only.side == "B" else "-",
                f"only in {only.side} ({duration(only.median_ns)})",
            )


def timing_column(rows: list[TimingRow]) -> Column:
    """One unit for the table's medians, A's and B's alike, so they read side by side."""
    return Column.of(t for r in rows if r.timing for t in (r.timing.median_a_ns, r.timing.median_b_ns))


def timing_header(column: Column) -> list[str]:
    """The timing table's first columns, which every format's table opens with."""
    return [
        "fusion / kernel",
        column.header("A median", brackets=True),
        column.header("B median", brackets=True),
        "B/A",
        "floor",
        "verdict (B vs A)",
    ]


def timing_cells(column: Column, t: TimingVerdict | None) -> tuple[str, str, str, str]:
    """A row's medians, ratio and floor (``column``'s unit), blank where the row has no timing."""
    if t is None:
        return ("", "", "", "")
    return (column.cell(t.median_a_ns), column.cell(t.median_b_ns), ratio(t.ratio), floor_cell(t.floor, t.p_value))


def launch_change(row: TimingRow) -> str:
    """A's launch, and of B's only what differs: ``grid 4096x1x1, block 512x1x1, 31 regs → block
    128x1x1, 40 regs`` (the whole of B's where the two are not known field for field)."""
    if row.launch_a == row.launch_b:
        return row.launch_a
    if row.parts_a and len(row.parts_a) == len(row.parts_b):
        changed = [b for a, b in zip(row.parts_a, row.parts_b) if a != b]
        return f"{row.launch_a} → {', '.join(changed)}"
    return f"{row.launch_a} → {row.launch_b}"


def _kernel_on(report: DiffReport, pair: FusionPair, side: str, order: int) -> KernelRecord | None:
    return report.kernel_at(pair, side, order)


@dataclass(frozen=True)
class PropertyRow:
    where: str
    """Fusion label (and kernel), or ``capture`` for capture-wide differences."""
    path: str
    a: str
    b: str
    category: str


def property_rows(report: DiffReport) -> list[PropertyRow]:
    """Every recorded property that differs: capture-wide, per fusion, per kernel."""
    rows = [PropertyRow("capture", c.path, value_text(c.a), value_text(c.b), c.category) for c in report.result.changes]
    for pair in report.result.pairs:
        rows += [PropertyRow(pair.label, c.path, value_text(c.a), value_text(c.b), c.category) for c in pair.changes]
        for kernel in pair.kernels:
            rows += [
                PropertyRow(
                    f"{pair.label} / {kernel.normalized_name}", c.path, value_text(c.a), value_text(c.b), c.category
                )
                for c in kernel.changes
            ]
    return rows


def finding_links(finding: Finding) -> list[tuple[str, tuple[int, ...]]]:
    """``supported by`` and ``follows from`` with the ranks they name, where there are any."""
    return [
        (name, ranks)
        for name, ranks in (("supported by", finding.supported_by), ("follows from", finding.caused_by))
        if ranks
    ]


def scrubbed(text: str) -> str:
    """Any text from a record, its absolute paths cut to file names."""
    return scrub_paths(text)


def clean_report(report: DiffReport) -> DiffReport:
    """``report`` with absolute paths taken out of what the documents print verbatim: capture
    sources, warnings, finding evidence and diff sources."""
    result = report.result
    result = dataclasses.replace(
        result,
        source_a=scrubbed(result.source_a),
        source_b=scrubbed(result.source_b),
        warnings=tuple(scrubbed(w) for w in result.warnings),
        findings=tuple(
            dataclasses.replace(
                f,
                title=scrubbed(f.title),
                evidence=tuple(scrubbed(e) for e in f.evidence),
                data=tuple(scrubbed_evidence(e) for e in f.data),
            )
            for f in result.findings
        ),
    )
    return dataclasses.replace(report, result=result)


def samples_of(report: DiffReport) -> Iterator[tuple[str, str | None, tuple[float, ...], tuple[float, ...]]]:
    """(fusion label, kernel name or None, samples of A, samples of B), for the plots."""
    for pair in report.result.pairs:
        fa, fb = report.fusion_a(pair), report.fusion_b(pair)
        yield pair.label, None, fa.timing.samples_ns, fb.timing.samples_ns
        for kernel in pair.kernels:
            ka, kb = report.kernel_records(pair, kernel)
            yield pair.label, kernel.normalized_name, ka.timing.samples_ns, kb.timing.samples_ns


def capture_warnings(capture: Capture) -> list[str]:
    """The capture's warnings and its fusions' as the documents list them, each cut to
    :data:`~fusiondiff.records.limits.LINE_CHARS` (a warning made megabytes long was written whole)."""
    return [scrubbed(cut(w)) for w in capture.warnings] + [
        scrubbed(cut(f"{f.name}: {w}")) for f in capture.fusions for w in f.warnings
    ]
