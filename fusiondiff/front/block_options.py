"""The command line's block-level options, shared by ``capture``, ``replay`` and ``roundtrip``."""

from __future__ import annotations

import argparse
from typing import Any

DEFAULT_RUNS = 5
DEFAULT_MAX_OVERHEAD_PCT = 25.0
"""Above this the timeline is more the probe's than the kernel's: the probe's cost is per CTA, so it
weighs most on short CTAs, and on the H200 its first layout cost +32.8 % on a kernel of 2.7 us CTAs
(0.9 us each) against +12.4 % on one of 4.4 us CTAs; a quarter of the kernel's time keeps the wave
and duration comparisons between two sides measured with the same probe meaningful, and refuses a
kernel whose CTAs the probe would stretch by a third."""


def _runs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of runs") from None
    if not 1 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{value} runs: give 1 to 100")
    return value


def _percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage") from None
    if not 0 < value <= 1000:
        raise argparse.ArgumentTypeError(f"{value} %: give more than 0 and at most 1000")
    return value


def add_timeline_options(group: Any, flag: bool = True) -> None:
    """``--sm-timeline``, ``--sm-timeline-runs N`` and ``--sm-timeline-max-overhead PCT`` on a
    parser or group (a flag and valued options apart: ``--sm-timeline SCRIPT`` must not read the
    script as a number)."""
    if flag:
        group.add_argument(
            "--sm-timeline",
            action="store_true",
            help="also record each nvFuser kernel's block-level timeline: which SM ran each CTA and when, with a "
            "probe compiled into a copy of nvFuser's own source, after the timing protocol; kept beside the "
            "capture (.timeline.safetensors)",
        )
    group.add_argument(
        "--sm-timeline-runs",
        type=_runs,
        default=DEFAULT_RUNS,
        metavar="N",
        help=f"instrumented runs per kernel for --sm-timeline, each after the protocol's L2 treatment (default {DEFAULT_RUNS})",
    )
    group.add_argument(
        "--sm-timeline-max-overhead",
        type=_percent,
        default=DEFAULT_MAX_OVERHEAD_PCT,
        metavar="PCT",
        help="refuse a kernel's timeline when its instrumented copy is more than PCT %% slower than the plain "
        f"kernel (default {DEFAULT_MAX_OVERHEAD_PCT:g})",
    )


def timeline_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The :class:`~fusiondiff.records.options.RecordingOptions` fields the arguments set."""
    return {
        "sm_timeline": getattr(args, "sm_timeline_runs", DEFAULT_RUNS) if getattr(args, "sm_timeline", False) else 0,
        "sm_timeline_max_overhead": getattr(args, "sm_timeline_max_overhead", DEFAULT_MAX_OVERHEAD_PCT) / 100,
    }
