"""Plain-text summary of one capture for the terminal (the diff summary is in ``diff_text``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fusiondiff.records import limits
from fusiondiff.records.escape import printable
from fusiondiff.records.model import Capture, FusionRecord, KernelRecord, LaunchConfig, traced_name
from fusiondiff.records.units import Column, duration
from fusiondiff.report.formats.traffic_text import kernel_figure, text_lines
from fusiondiff.report.layout import fit_all
from fusiondiff.report.views.traffic_view import TrafficRow, capture_view


def _dims(d: tuple[int, int, int] | None) -> str:
    return "-" if d is None else "x".join(str(v) for v in d)


def describe_launch(launch: LaunchConfig) -> str:
    """One-line launch configuration with units."""
    smem = "-" if launch.shared_mem_bytes is None else f"{launch.shared_mem_bytes} B"
    regs = "-" if launch.registers_per_thread is None else str(launch.registers_per_thread)
    text = f"grid {_dims(launch.grid)} block {_dims(launch.block)} smem {smem} regs {regs}"
    if launch.cluster and launch.cluster != (0, 0, 0):
        text += f" cluster {_dims(launch.cluster)}"
    return text


NAME_WIDTH = 44
"""Kernel names up to this long share a column; a longer one (an ATen kernel's C++ signature) gets
a line of its own and its numbers go on the next, in the column, as ``--help`` does with options."""


def _kernel_lines(
    kernels: Sequence[KernelRecord], width: int, line_width: int | None, figures: Mapping[int | None, TrafficRow]
) -> list[str]:
    """One fusion's kernels as a table: name (in ``width``), median and IQR (one unit for the
    fusion), the bandwidth ``figures`` by kernel order (``None``: the kernels judged together, a line
    of its own first), launch; the figures and the launch on lines of their own where the row would
    not fit ``line_width`` (the bytes left out first)."""
    column = Column.of([k.timing.median_ns for k in kernels])
    numbers = [
        f"{column.cell(k.timing.median_ns):>9} {column.unit}  (iqr {column.cell(k.timing.iqr_ns)} {column.unit})"
        for k in kernels
    ]
    if figures:  # the figures in a column of their own
        numbers = [n.ljust(max(map(len, numbers))) for n in numbers]
    lines = []
    whole = figures.get(None)
    if whole is not None:
        summed = f"{column.cell(whole.traffic.time_ns):>9} {column.unit}  (summed)".ljust(len(numbers[0]))
        lines.append(f"    {f'({whole.kernels} kernels together)':<{width}} {summed}")
        _append(lines, [kernel_figure(whole), kernel_figure(whole, with_bytes=False)], line_width)
    for k, cells in zip(kernels, numbers):
        if len(k.normalized_name) > width:
            lines += [f"    {k.normalized_name}", f"    {'':<{width}} {cells}"]
        else:
            lines.append(f"    {k.normalized_name:<{width}} {cells}")
        row = figures.get(k.order)
        if row is not None:
            _append(lines, [kernel_figure(row), kernel_figure(row, with_bytes=False)], line_width)
        _append(lines, [describe_launch(k.launch)], line_width)
    return lines


def _append(lines: list[str], choices: Sequence[str], line_width: int | None) -> None:
    """The first of ``choices`` that fits on the last line, else the first on a line of its own."""
    for part in choices:
        if line_width is None or len(lines[-1]) + 2 + len(part) <= line_width:
            lines[-1] += f"  {part}"
            return
    lines.append(f"      {choices[0]}")


NOTATION = [
    "notation",
    "  bfloat16[2, 512]@256B  an input: dtype[shape], data pointer aligned to 256 bytes, storage offset 0",
    "  +1@2B                  storage offset +1 element, data pointer aligned to 2 bytes (below 16 B",
    "                         nvFuser cannot use its widest vector loads)",
    "  segments A+B           the schedulers of the segments nvFuser split the fusion into, in order",
    "  median, iqr            over the timing samples: the middle one, and the spread of the middle",
    "                         half (75th minus 25th percentile)",
    "  grid, block            CTAs per grid and threads per CTA (x by y by z); smem: shared memory per",
    "                         CTA (static and dynamic); regs: registers per thread; '-': not recorded",
    "  called Nx              how many times the session executed the fusion",
    "  GB/s, MB               the bytes a kernel must move (its fusion's inputs and outputs, read and",
    "                         written once) over its median; % of peak: against the GPU's measured",
    "                         peak; [a]: a note on the figure, listed after the fusions",
]
"""The legend at the end of ``show``'s text: what its shorthand means (docs/concepts/findings.md)."""


def _inputs_line(f: FusionRecord) -> str:
    parts = []
    for t in f.inputs:
        if t.kind == "scalar":
            parts.append(f"{t.dtype}={t.scalar_value}")
        else:
            dtype = t.dtype.replace("torch.", "")
            extra = "" if t.storage_offset == 0 else f"+{t.storage_offset}"
            parts.append(f"{dtype}{list(t.shape)}{extra}@{t.alignment_bytes}B")
    return ", ".join(parts)


def communication_lines(capture: Capture) -> list[str]:
    """The capture's communication kernels (name, calls, median and total in us), then the block's
    fusion time against its communication time; nothing when none was recorded."""
    kernels = capture.communication
    if not kernels:
        return []
    width = max(40, *(len(k.name) for k in kernels))
    median, total = Column.of([k.median_ns for k in kernels]), Column.of([k.total_ns for k in kernels])
    lines = [
        "  communication kernels (kept apart from fusion time)",
        f"    {'name':<{width}} {'calls':>7} {median.header('median'):>10} {total.header('total'):>12}",
    ]
    for k in sorted(kernels, key=lambda k: (-k.total_ns, k.name)):
        lines.append(f"    {k.name:<{width}} {k.calls:>7} {median.cell(k.median_ns):>10} {total.cell(k.total_ns):>12}")
    lines.append(
        f"  in the capture block: fusions {duration(capture.fusion_time_ns)} ({len(capture.fusions)} record(s), "
        f"median x calls, summed), communication {duration(capture.communication_ns)} (every call, waiting for the "
        "other ranks included)"
    )
    return lines


MAX_FUSIONS_SHOWN = limits.FUSIONS_SHOWN
"""``show`` prints at most this many fusions, then says how many it left out: a capture of
10,000 fusions is tens of thousands of lines nobody reads on a terminal."""
MAX_KERNELS_SHOWN = limits.KERNELS_SHOWN
"""Kernel lines printed per fusion, likewise."""


def render_capture_text(
    capture: Capture,
    shown: Sequence[int] | None = None,
    max_fusions: int | None = MAX_FUSIONS_SHOWN,
    max_kernels: int | None = MAX_KERNELS_SHOWN,
    width: int | None = None,
) -> str:
    """Summary of a capture: environment, protocol, and each fusion with its kernels;
    ``shown`` are the positions of the fusions to print, in that order (``None``: all of them).

    Fusions are numbered ``#0``, ``#1``... by their position in the capture, which every
    ``--fusion`` accepts. Every line is escaped (:func:`~fusiondiff.records.escape.printable`): a capture's
    names are someone else's text. Past ``max_fusions`` fusions, or ``max_kernels`` kernels of a
    fusion, one line says how many were left out and how to see them (``None``: no limit). No line
    is wider than ``width`` (:mod:`fusiondiff.report.layout`; None: lines as long as they are)."""
    positions = list(range(len(capture.fusions))) if shown is None else list(shown)
    env, proto = capture.environment, capture.protocol
    listed = positions if max_fusions is None else positions[:max_fusions]
    traffic = capture_view(capture, listed)
    lines = [
        f"{capture.kind} capture of {capture.source or '?'}  (schema {capture.schema_version})",
        f"  recorded {env.recorded_at or '?'} on {env.gpu_name or '?'} ({env.sm_count or '?'} SMs, "
        f"L2 {(env.l2_bytes or 0) / 2**20:.0f} MiB); torch {env.torch_version}, nvFuser {env.nvfuser_version}, "
        f"Thunder {env.thunder_version}",
        f"  protocol: {proto.method}, {proto.warmup} warm-up, {proto.samples} samples, L2 {proto.l2_mode}",
        f"  {traffic.peak}",
        f"  {len(capture.fusions)} fusion(s)"
        if len(positions) == len(capture.fusions)
        else f"  {len(positions)} of {len(capture.fusions)} fusion(s) shown",
    ]
    if capture.tensors_file:
        lines.append(f"  exact inputs saved in {capture.tensors_file}")
    for w in capture.warnings:
        lines.append(f"  warning: {w}")
    names = [len(k.normalized_name) for i in listed for k in capture.fusions[i].kernels[:max_kernels]]
    name_width = min(max(names, default=0), NAME_WIDTH)
    for i in listed:
        f = capture.fusions[i]
        segs = "+".join(f.segmentation.schedulers) or "-"
        if f.failure is not None:
            log = f" (full output: {f.failure.log_file})" if f.failure.log_file else ""
            lines.append(
                f"  #{i} {traced_name(f.name, f.trace)}  FAILED, {f.failure.kind.replace('_', ' ')}: {f.failure.message}{log}"
            )
        else:
            lines.append(
                # a fusion that launched no kernel was timed at 0: nothing was measured
                f"  #{i} {traced_name(f.name, f.trace)}  {duration(f.timing.median_ns if f.kernels else None)} "
                f"median over {f.timing.count} samples, "
                f"{len(f.kernels)} kernel(s), segments {segs}, called {f.call_count}x"
            )
        lines.append(f"    inputs: {_inputs_line(f)}")
        if f.enable_options or f.disable_options:
            lines.append(f"    options: enable={list(f.enable_options)} disable={list(f.disable_options)}")
        kernels = f.kernels if max_kernels is None else f.kernels[:max_kernels]
        figures = {r.traffic.kernel_order: r for r in traffic.rows if r.position == i}
        lines += _kernel_lines(kernels, name_width, width, figures)
        if len(kernels) < len(f.kernels):
            lines.append(
                f"    ... {len(f.kernels) - len(kernels)} more kernel(s) not shown (`--format json` has them all)"
            )
        lines.extend(f"    warning: {w}" for w in f.warnings)
    if len(listed) < len(positions):
        lines.append(
            f"  ... {len(positions) - len(listed)} more fusion(s) not shown: pick with `--top N` or "
            f"`--fusion NAME`, or `--format json` for all"
        )
    lines += text_lines(traffic, width)
    lines += communication_lines(capture)
    if listed:
        lines += NOTATION
    # escaped first: an escape (ESC as \x1b) makes a line longer
    return "\n".join(fit_all((printable(line) for line in lines), width)) + "\n"
