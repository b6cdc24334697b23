"""Thunder's own timing figures, as its report functions print them, and the grammar of those lines.

``thunderfx_benchmark_report`` compares two executors of each FX graph and each nvFusion region
with one of its timers and prints one line per comparison (Thunder's ``check_timing``)::

    Benchmark WallTime ran successfully on **graph0_thunder_0_nvFusion0_forward**: torchcompile(12.345 us) , nvfuser(10.001 us)
    Benchmark KernelTime for **graph0_thunder_0_nvFusion0_forward** requires investigation: torchcompile(...) and nvfuser(...) is not close (rtol=0.0, atol=0.0)

The same lines are copied into the docstring at the end of each benchmark script it saves
("Benchmark results:"). Each line gives two :class:`ThunderFigure` records: the numbers are kept as
numbers (nanoseconds); what each timer measures is said by the report, in words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fusiondiff.records.constraints import Duration

_UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
"""Nanoseconds per unit of Thunder's printed times (``get_pretty_time_str``: torch's ``select_unit``)."""

_TIME = r"(?P<{0}>\w+)\((?P<{0}_value>[0-9]+(?:\.[0-9]+)?) (?P<{0}_unit>ns|us|ms|s)\)"
_LINE = re.compile(
    r"Benchmark (?P<timer>\w+) (?:ran successfully on|for) \*\*(?P<region>[^*\n]+)\*\*"
    r"(?:: | requires investigation: )" + _TIME.format("b") + r" (?:,|and) " + _TIME.format("a")
)
"""One comparison line of Thunder's ``check_timing``: B's executor first, then A's."""


@dataclass(frozen=True)
class ThunderFigure:
    """One median that Thunder measured and printed for a graph or nvFusion region."""

    region: str
    """The name Thunder printed: an nvFusion region (``graph0_thunder_0_nvFusion0_forward``) or an
    FX graph's split and pass (``graph0_thunder_0 forward``)."""
    timer: str
    """Thunder's timer: ``WallTime``, ``KernelTime`` or ``WallTimeWithMemoryUsage``."""
    executor: str
    """What ran the region under that timer: ``nvfuser``, ``torchcompile``, ``thunder``,
    ``inductor_backend``."""
    median_ns: Duration
    """The median Thunder printed (rounded as printed: three decimals in its unit)."""
    source: str = ""
    """Where it was read: the stream file Thunder printed to, or the benchmark script's docstring."""


def parse_thunder_figures(text: str, source: str = "") -> tuple[ThunderFigure, ...]:
    """Every figure of every comparison line in ``text`` (Thunder's printed stream or a benchmark
    script), in the order printed; a region, timer and executor seen again keeps its first figure."""
    seen: dict[tuple[str, str, str], ThunderFigure] = {}
    for match in _LINE.finditer(text):
        for side in ("b", "a"):
            figure = ThunderFigure(
                region=match["region"].strip(),
                timer=match["timer"],
                executor=match[side],
                median_ns=float(match[f"{side}_value"]) * _UNIT_NS[match[f"{side}_unit"]],
                source=source,
            )
            seen.setdefault((figure.region, figure.timer, figure.executor), figure)
    return tuple(seen.values())


def merged_figures(*groups: tuple[ThunderFigure, ...]) -> tuple[ThunderFigure, ...]:
    """The figures of several sources, the first source's figure kept where two give the same
    region, timer and executor (Thunder's stream before a script's copy of the same line)."""
    seen: dict[tuple[str, str, str], ThunderFigure] = {}
    for group in groups:
        for figure in group:
            seen.setdefault((figure.region, figure.timer, figure.executor), figure)
    return tuple(seen.values())
