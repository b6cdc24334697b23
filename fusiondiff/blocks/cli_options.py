"""The command line's block-level options, shared by ``capture``, ``replay`` and ``roundtrip``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
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
    """The :class:`~fusiondiff.options.RecordingOptions` fields the arguments set."""
    return {
        "sm_timeline": getattr(args, "sm_timeline_runs", DEFAULT_RUNS) if getattr(args, "sm_timeline", False) else 0,
        "sm_timeline_max_overhead": getattr(args, "sm_timeline_max_overhead", DEFAULT_MAX_OVERHEAD_PCT) / 100,
    }


def add_command(sub: Any, progress: Callable[[str], None]) -> None:
    """The ``sm-timeline`` subcommand (its progress lines through ``progress``)."""

    def handler(args: argparse.Namespace) -> int:
        from fusiondiff.blocks.live_side import record_live_side
        from fusiondiff.escape import printable

        path = record_live_side(
            args.live,
            args.output,
            args.sm_timeline_runs,
            args.sm_timeline_max_overhead / 100,
            timeout_s=args.timeout,
            progress=progress,
            device=args.device,
        )
        print(f"wrote {printable(str(path))}", file=sys.stderr)
        return 0

    p = sub.add_parser(
        "sm-timeline",
        help="record the block-level timelines of a capture's fusions by replaying them on its inputs",
        description="Replay every fusion of LIVE on LIVE's own inputs (the exact tensors of --save-inputs, else "
        "tensors rebuilt from their recorded layout), in one fresh process, under LIVE's timing protocol, with "
        "--sm-timeline; write LIVE's records with the timelines to OUTPUT (the CTA arrays beside it). A record "
        "whose replay launched other kernels gets none, and says why. To record them in the session itself (what "
        "other work on the GPU did to it shows only there), capture with --sm-timeline instead.",
    )
    p.add_argument("live", metavar="LIVE", help="capture file (.json)")
    p.add_argument(
        "-o", "--output", required=True, help="capture to write (.json): LIVE's records with their timelines"
    )
    p.add_argument("--device", type=int, metavar="N", help="replay on CUDA device N")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds before the replay is stopped (default 900)")
    add_timeline_options(p, flag=False)
    p.set_defaults(handler=handler)
