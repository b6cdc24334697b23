"""The argument types and option groups that several subcommands share (:mod:`fusiondiff.front.cli_parser`
builds the parser from them): ranged numbers, the timing protocol, the timer, the capture's options.
Imports stay light, as the parser's do."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fusiondiff.front.block_options import add_timeline_options
from fusiondiff.records.gates import QUESTIONS, STRICT_GATE

if TYPE_CHECKING:
    from fusiondiff.report.interface import DiffReport


def number(kind: type[int] | type[float], low: float, high: float | None = None) -> Callable[[str], Any]:
    """An argparse ``type=`` that takes a number of ``kind`` in ``[low, high)``, so argparse itself
    refuses what is out of range (one line, exit 2: :class:`OneLineParser`)."""

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if kind is int else 'a number'}") from None
        if value < low or (high is not None and value >= high) or value != value:
            bound = f"at least {low:g}" + ("" if high is None else f" and below {high:g}")
            raise argparse.ArgumentTypeError(f"{text} is out of range: {bound}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in "invalid int value"
    return parse


COUNT = number(int, 1)
"""1 or more (``--top``, ``--samples``, ``--batch``, ``--ahead``)."""
SECONDS = number(float, 1e-3, math.inf)
"""A timeout: a positive, finite number of seconds."""


EXIT_CODES = (
    "Exit codes: 0 when every gated question passes; 1 when one fails; 2 on error; 3 when none fails but one "
    "could not be judged (nothing measured: a side's kernel time 0 ns or under 3 samples, host time not "
    "recorded). The kernel question is always gated: 1 when a matched fusion's kernel time differs beyond "
    "what moves it between processes, a side failed or a fusion is missing. "
    "--gate host adds the host question (fd.execute's host time per call differs, or a side's host keeps "
    "its GPU waiting); --strict adds repro fidelity (any recorded property differs, e.g. what B runs "
    "differently from A)."
)
"""The exit codes of every command that diffs (diff, ranks, roundtrip), in their descriptions."""


def add_gate_options(p: argparse.ArgumentParser, whose: str = "") -> None:
    """``--gate`` and ``--strict``: the questions besides kernel time that decide the exit code."""
    p.add_argument(
        "--gate",
        action="append",
        choices=QUESTIONS,
        default=[],
        help="also exit 1 when this question fails, 3 when it could not be judged (repeatable): host, the host time per call "
        "(fd.execute against fd.execute) or a side whose host keeps its GPU waiting; fidelity, as --strict "
        "(kernel time is always gated)",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help=f"exit 1 on any recorded property difference{whose}, even one that explains no time "
        "(the same as --gate fidelity)",
    )


def gates(args: argparse.Namespace) -> tuple[str, ...]:
    """The questions ``--gate`` and ``--strict`` add to the kernel question's gate."""
    return tuple(
        dict.fromkeys([*getattr(args, "gate", []), *([STRICT_GATE] if getattr(args, "strict", False) else [])])
    )


def narrowed(report: DiffReport, args: argparse.Namespace) -> DiffReport:
    """``report`` narrowed to the fusions ``--top``, ``--fusion`` and ``--min-gap`` pick
    (:func:`fusiondiff.report.views.filters.select`)."""
    from fusiondiff.report.views.filters import Selection, select

    min_gap_ns = None if args.min_gap is None else args.min_gap * 1000
    return select(report, Selection(top=args.top, fusion=args.fusion, min_gap_ns=min_gap_ns))


def add_protocol_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("timing protocol (shared by capture and replay)")
    g.add_argument(
        "--samples",
        type=COUNT,
        default=30,
        help="timed samples per fusion (default 30, at least 10 for the statistics)",
    )
    g.add_argument("--warmup", type=number(int, 0), default=5, help="untimed executions before sampling (default 5)")
    g.add_argument(
        "--l2",
        choices=("cold", "warm"),
        default="cold",
        help="cold: flush L2 before each sample (default); warm: back to back",
    )
    g.add_argument(
        "--no-peak",
        dest="peak",
        action="store_false",
        help="do not measure the GPU's DRAM bandwidth when recording ends (a 1 GiB device-to-device copy, "
        "well under a second; it is what each kernel's %% of peak is a share of)",
    )
    add_timeline_options(g)


def add_timer_option(p: argparse.ArgumentParser, both: bool) -> None:
    from fusiondiff.records.options import DEFAULT_TIMER, TIMERS

    if both:
        p.add_argument(
            "--timer",
            choices=(*TIMERS, "both"),
            default=DEFAULT_TIMER,
            help="kernel-record source: kineto (torch.profiler, default), nvfuser (nvFuser's PythonProfiler), "
            "or both (one child process per timer, then `fusiondiff timers`; CUPTI takes one subscriber per "
            "process)",
        )
        return
    p.add_argument(
        "--timer",
        choices=TIMERS,
        default=DEFAULT_TIMER,
        help="kernel-record source: kineto (torch.profiler, default) or nvfuser (nvFuser's PythonProfiler). A "
        "session runs once and CUPTI takes one subscriber per process, so both timers are for the replay: capture, "
        "then `fusiondiff repro` and `fusiondiff replay --timer both` on the scripts",
    )


def add_capture_options(p: argparse.ArgumentParser) -> None:
    """The capture's own options: on its subcommand, and again to take them back from after SCRIPT."""
    p.add_argument(
        "-o", "--output", help="capture file to write (.json, or .json.gz gzipped): required, before or after SCRIPT"
    )
    p.add_argument("--only", nargs="+", metavar="NAME", help="record only these fusions (nvFusion0 ...)")
    p.add_argument("--save-inputs", action="store_true", help="also save the exact input tensors (safetensors)")
    p.add_argument("--cuda-source", action="store_true", help="also store the generated CUDA source text")
    p.add_argument(
        "--no-communication",
        dest="communication",
        action="store_false",
        help="under torchrun, do not record the session's communication kernels (NCCL's, kept apart from fusion "
        "time) with torch.profiler across the capture: for a script that starts its own torch profiler inside "
        "the capture, or a long run whose profiler buffers would grow too large",
    )
    add_protocol_options(p)
    add_timer_option(p, both=False)


def add_pool_options(p: argparse.ArgumentParser) -> None:
    """``--also-a`` and ``--also-b``: captures of a side's program in other processes, pooled into it."""
    for side in ("A", "B"):
        p.add_argument(
            f"--also-{side.lower()}",
            action="append",
            default=[],
            metavar="CAPTURE",
            help=f"another capture of {side}'s program, run in another process (repeat it for each): its fusions' "
            f"timings join {side}'s, and a fusion's verdict is judged against the spread measured between these "
            "processes (from 3) instead of the recorded calibration",
        )
