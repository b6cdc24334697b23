"""Every bound fusiondiff keeps on what it reads, works through and writes, stated once.

A capture, a diff record or a timeline file may come from anyone, so each view shows at most a
stated number of each thing (and says in its output how many it left out), each reader refuses what
is past its bound in one line, and each output stays within a stated multiple of its input. The
views read their limits from here; the fuzz harness (``tests/fuzz/``) enforces the multiples on
every command and output format.
"""

from __future__ import annotations

# ---------------------------------------------------------------------------------------------
# Reading

CAPTURE_BYTES = 512 * 2**20
"""A capture (JSON, after gunzip) larger than this is refused."""
INTEGER_DIGITS = 40
"""An integer in a capture with more digits than this is refused (a shape or stride past any GPU)."""
TIMELINE_BYTES = 1 << 30
"""A timeline (safetensors) file larger than this is refused."""

# ---------------------------------------------------------------------------------------------
# Shown: what each view shows at most, the rest counted and said

LINE_CHARS = 4_000
"""Characters of one line of the terminal text before it is wrapped (a name someone made a megabyte
long is cut there, and the line says how many characters it left out)."""
TEXT_CHARS = 20_000
"""Characters of one text from a record in the Markdown and HTML reports (a table cell, a line of
evidence, a name): the rest is cut and counted there (a recorded version made 10 MB long was
written whole, three times, into a 60 MB Markdown report)."""
REPRO_INPUTS = 4_096
"""Inputs of one fusion a repro script is written for: past it ``repro`` refuses the fusion in one
line (a script of 20,000 inputs is 4 MB, and reading it back as Python does, to prove it is the
code meant, took 500 MB)."""
TRACE_NAME_CHARS = 200
"""Characters of a kernel's name on each of its SM slices in the Perfetto trace (a kernel has one
slice per SM and wave, or per CTA: a name made a megabyte long was written hundreds of times); the
kernel's own slice keeps the name whole."""
FUSIONS_SHOWN = 1_000
"""Fusions listed by ``show``."""
KERNELS_SHOWN = 100
"""Kernels listed per fusion by ``show``."""
TIMING_ROWS = 5_000
"""Rows of the fusions-and-kernels table of the Markdown and HTML reports (a fusion's line, then
its kernels'), the first in the table's order; the table says how many it left out (a fusion of
100,000 kernels made a Markdown table of 22 MB and an HTML page of 145 MB, every kernel a plot)."""
PROPERTY_ROWS = 60
"""Rows of a fusion's property changes in a report."""
DERIVED_EVENTS = 50_000
"""Events of the Perfetto trace's derived view."""
CTAS_PER_KERNEL = 20_000
"""CTA slices per kernel on the Perfetto trace's SM tracks (the earliest to start)."""
CTAS_SHOWN = 200_000
"""CTA slices on the Perfetto trace's SM tracks over all kernels; kernels past it keep their
kernel slice only, and the trace's metadata says how many were left out."""
BLOCK_BINS = 160
"""Time bins of one per-SM picture of the HTML report (a row per SM)."""
BLOCK_CELLS = 250_000
"""Cells (SMs x time bins) of all per-SM pictures of one HTML report together (each cell at most
one SVG rectangle, about 70 bytes); a fusion whose pictures would pass it is listed, not drawn."""

# ---------------------------------------------------------------------------------------------
# Output and memory: the multiple of the input each command may reach

OUTPUT_MULTIPLE = 16
"""Bytes a command writes (stdout and its files together) per byte of its input, above
:data:`OUTPUT_FLOOR`."""
OUTPUT_FLOOR = 16 * 2**20
"""Bytes any command may write whatever its input (a report of a tiny capture is a page)."""
MEMORY_MULTIPLE = 4
"""Peak memory a command may add per byte of its input, above :data:`MEMORY_FLOOR`."""
MEMORY_FLOOR = 384 * 2**20
"""Memory any command may add whatever its input (the interpreter, numpy, one report)."""


def output_allowed(input_bytes: int) -> int:
    """The bytes a command may write for an input of ``input_bytes``."""
    return OUTPUT_FLOOR + OUTPUT_MULTIPLE * input_bytes


def memory_allowed(input_bytes: int) -> int:
    """The memory a command may add for an input of ``input_bytes``."""
    return MEMORY_FLOOR + MEMORY_MULTIPLE * input_bytes


# ---------------------------------------------------------------------------------------------
# The fuzz harness's own limits (tests/fuzz/)

FUZZ_CPU_SECONDS = 10
"""CPU seconds one command of a fuzz case may take (``RLIMIT_CPU``: the work it does, whatever else
the machine runs); a command past it is killed and the case fails."""
FUZZ_SECONDS = 90.0
"""Wall-clock seconds after which the harness kills a command it still waits for (a command that
waits on something without using the CPU)."""
FUZZ_ADDRESS_SLACK = 1 << 30
"""Address space the harness grants beyond :func:`memory_allowed` (mappings never touched: thread
stacks, numpy's and the allocator's reservations); resident memory is what it checks."""
