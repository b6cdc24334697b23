"""Command-line front end. It parses arguments, calls the library, and prints: reports to stdout,
progress and errors to stderr. Every expected failure is one line on stderr and exit code 2: also
an output that cannot be written (stdout included), Ctrl-C (exit 130) and SIGTERM (exit 143, after
removing any half-written file). Text from a capture reaches the terminal escaped.

Top-level imports stay light (no records, no numpy): Ctrl-C while they load is handled by
``__main__``, and the commands import what they need.
"""

from __future__ import annotations

import argparse
import errno
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from fusiondiff import __version__, termination
from fusiondiff.errors import FusionDiffError, OutputError
from fusiondiff.escape import printable

if TYPE_CHECKING:
    from fusiondiff.options import RecordingOptions

EXIT_OK = 0
EXIT_DISCREPANCY = 1
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130
"""128 + SIGINT, as shells report a command stopped by Ctrl-C."""
EXIT_TERMINATED = 143
"""128 + SIGTERM."""

DESCRIPTION = """\
Explain why the same nvFuser fusion runs at different speeds in two places: live, inside a
Thunder session, and reconstructed, from its repro script in a fresh process.

  fusiondiff capture train.py -o live.json      record every nvFusion a script runs
  fusiondiff replay repro.py -o replay.json     record the fusions repro scripts build
  fusiondiff diff live.json replay.json         say whether they differ, and why
  fusiondiff timers kineto.json nvfuser.json    whether two timers' recordings of the same
                                                fusions agree (replay --timer both writes them)
  fusiondiff ranks DIR                          the ranks of a torchrun capture against rank 0
  fusiondiff roundtrip live.json -o DIR         repro + fresh-process replay of every distinct
                                                fusion of a session, one diff, a summary
  fusiondiff show live.json                     summarise one capture
  fusiondiff report live.json replay.json -o report.html
                                                the diff as Markdown, HTML or Perfetto trace
  fusiondiff demo                               the seed case: live demo on a GPU,
                                                bundled H200 captures elsewhere
"""


def _add_protocol_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("timing protocol (shared by capture and replay)")
    g.add_argument(
        "--samples", type=int, default=30, help="timed samples per fusion (default 30, at least 10 for the statistics)"
    )
    g.add_argument("--warmup", type=int, default=5, help="untimed executions before sampling (default 5)")
    g.add_argument(
        "--l2",
        choices=("cold", "warm"),
        default="cold",
        help="cold: flush L2 before each sample (default); warm: back to back",
    )


def _add_timer_option(p: argparse.ArgumentParser) -> None:
    from fusiondiff.options import DEFAULT_TIMER, TIMERS

    p.add_argument(
        "--timer",
        choices=(*TIMERS, "both"),
        default=DEFAULT_TIMER,
        help="kernel-record source: kineto (torch.profiler, default), nvfuser (nvFuser's PythonProfiler), "
        "or both (replay only: one child process per timer, then `fusiondiff timers`; CUPTI takes one "
        "subscriber per process)",
    )


def _add_capture_options(p: argparse.ArgumentParser) -> None:
    """The capture's own options: on its subcommand, and again to take them back from after SCRIPT."""
    p.add_argument("-o", "--output", help="capture file to write (.json); required")
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
    _add_protocol_options(p)
    _add_timer_option(p)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fusiondiff", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"fusiondiff {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "capture",
        help="run a script and record every nvFusion it executes",
        description="Run SCRIPT (like `python -m cProfile`) under fusiondiff.capture() and record every "
        "nvFusion Thunder executes: definition, inputs, options, kernels with launch configs, segmentation "
        "and timings under the shared protocol. Needs a CUDA GPU, Thunder and nvFuser.",
    )
    p.add_argument("script", help="Python script to run")
    p.add_argument(
        "args",
        nargs=argparse.REMAINDER,
        help="arguments passed to the script; fusiondiff's own options may come before or after the script "
        "(put the script's arguments after -- when they clash with fusiondiff's)",
    )
    _add_capture_options(p)
    p.set_defaults(handler=_cmd_capture)

    p = sub.add_parser(
        "replay",
        help="run repro scripts in a fresh process and record their fusions",
        description="Run repro scripts (nvfuser_direct, or legacy `from nvfuser import ...`) one after the other "
        "in one fresh process, intercept every FusionDefinition.execute and record it like the live capture "
        "does, in one capture. The process's whole output goes to a log beside the capture (OUTPUT with .log). "
        "A fusion whose execution fails (an illegal address, a compile error) is kept with its inputs and the "
        "failure: the capture is written and the command exits 2, so `fusiondiff diff` can say why.",
    )
    p.add_argument("scripts", nargs="+", metavar="SCRIPT", help="repro scripts (.py), or directories of them")
    p.add_argument("-o", "--output", required=True, help="capture file to write (.json)")
    p.add_argument(
        "--inputs", metavar="CAPTURE", help="replace the script's inputs by the live side's (exact or synthesized)"
    )
    p.add_argument("--in-process", action="store_true", help="run in this process (a control for process effects)")
    p.add_argument(
        "--device",
        type=int,
        metavar="N",
        help="replay on CUDA device N (every cuda:K the scripts pin is moved there); by default an ordinal "
        "this machine lacks is moved to the current device, with a warning",
    )
    p.add_argument(
        "--timeout", type=float, default=900.0, help="seconds before the child process is stopped (default 900)"
    )
    p.add_argument("--save-inputs", action="store_true", help="also save the exact input tensors (safetensors)")
    p.add_argument("--cuda-source", action="store_true", help="also store the generated CUDA source text")
    _add_protocol_options(p)
    _add_timer_option(p)
    p.set_defaults(handler=_cmd_replay)

    p = sub.add_parser(
        "timers",
        help="whether two timers' recordings of the same fusions agree",
        description="Pair the fusions of two captures of the same fusions taken with different timers "
        "(`fusiondiff replay --timer both` writes OUTPUT and OUTPUT.nvfuser.json) and print, per fusion "
        "and kernel, both medians side by side, with every disagreement: kernels only one timer saw, "
        "launch configurations that differ, medians further apart than the tolerance. "
        "Exit 1 when they disagree.",
    )
    p.add_argument("a", metavar="A", help="capture taken with one timer (.json)")
    p.add_argument("b", metavar="B", help="capture of the same fusions taken with another timer (.json)")
    p.add_argument(
        "--tolerance",
        type=float,
        default=5.0,
        metavar="PCT",
        help="medians further apart than this (percent of A's) disagree (default 5)",
    )
    p.set_defaults(handler=_cmd_timers)

    p = sub.add_parser(
        "repro",
        help="write a faithful repro script from a capture",
        description="Write a repro script for a captured fusion that keeps what nvFuser's own repro drops: "
        "storage offset and alignment, integer value ranges, enable/disable options, NVFUSER_* variables.",
    )
    p.add_argument("capture", help="capture file (.json)")
    p.add_argument(
        "-o",
        "--output",
        required=True,
        help="script to write; with several fusions, a directory that gets one script per record "
        "(<trace>_<name>.py, with the definition hash and then #N added where names would clash)",
    )
    p.add_argument(
        "--fusion",
        metavar="NAME",
        help="only this fusion: its name (nvFusion0), key (forward/nvFusion0/1a2b3c4d5e6f, or its start) or "
        "#N, its position in the capture from #0 as `fusiondiff show` numbers them; records that share a key "
        "(one region run with an aligned and a misaligned input) are selected by #N",
    )
    p.set_defaults(handler=_cmd_repro)

    p = sub.add_parser(
        "diff",
        help="compare two captures and rank what explains the gap",
        description="Match the fusions and kernels of two captures, compare every recorded property and the "
        "timing distributions, and rank the findings. The verdict line says whether a side crashed, whether B "
        "runs at the same speed as A (or how much faster or slower, with the statistics), and whether the "
        "recorded properties are identical. Exit 0: every matched fusion has the same speed and no finding "
        "explains measurable time (property differences that cost no time are listed, not counted); 1: a speed "
        "differs, a fusion is missing or failed, or a cause explains time (with --strict, also any property "
        "difference); 2: error.",
    )
    p.add_argument("a", help="first capture (usually the live one)")
    p.add_argument("b", help="second capture (usually the replay)")
    p.add_argument("--json", metavar="FILE", help="also write the diff record as JSON")
    p.add_argument("--format", choices=("text", "json"), default="text", help="what to print on stdout")
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 on any recorded property difference, even one that explains no time",
    )
    p.set_defaults(handler=_cmd_diff)

    p = sub.add_parser(
        "ranks",
        help="compare the per-rank captures of one torchrun session, rank stragglers",
        description="Diff each rank's capture (live.rank1.json, ...) against rank 0's: the same fusion across "
        "ranks, one verdict line per rank, then the ranks slower than rank 0 ranked by their fusions' total time "
        "gap per step, each with the top finding of its diff (another kernel variant, clocks, inputs, L2...). "
        "A rank's own device (cuda:1 for rank 1) and its rank fields are not differences. Exit codes as `diff`: "
        "0 when every rank runs its fusions like rank 0, 1 when a rank differs, 2 on error.",
    )
    p.add_argument(
        "captures", nargs="+", metavar="DIR_OR_FILE", help="per-rank capture files, or a folder of NAME.rank<N>.json"
    )
    p.add_argument("--strict", action="store_true", help="exit 1 on any recorded property difference of a rank")
    p.set_defaults(handler=_cmd_ranks)

    p = sub.add_parser("show", help="summarise one capture", description="Print a summary of a capture file.")
    p.add_argument("capture", help="capture file (.json)")
    p.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text summary (default) or the capture record as JSON",
    )
    p.add_argument(
        "--top", type=int, metavar="N", help="only the N fusions with the largest median time, largest first"
    )
    p.add_argument("--fusion", metavar="NAME", help="only the fusions of this name (or key)")
    p.set_defaults(handler=_cmd_show)

    p = sub.add_parser(
        "report",
        help="render a diff as Markdown, HTML, Perfetto trace, JSON record or text",
        description="Render the diff of two captures (or a diff record written before with --format json) "
        "as Markdown to paste into an issue, one self-contained HTML page with plots, a Perfetto trace "
        "(ui.perfetto.dev) with a derived per-SM view, the JSON diff record, or the terminal text. "
        "Paths in the report are relative to the captures' folder.",
    )
    p.add_argument("inputs", nargs="+", metavar="FILE", help="two captures (A B), or one diff record (.json)")
    p.add_argument(
        "--format",
        default=None,
        help="md, html, perfetto, json or text (default: from -o's suffix: .md, .html, .json for the diff record; else text)",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write the report here instead of stdout")
    g = p.add_argument_group("narrowing (the verdict then speaks of the fusions shown)")
    g.add_argument("--top", type=int, metavar="N", help="only the N matched fusions with the largest median gap")
    g.add_argument("--fusion", metavar="NAME", help="only this fusion (name on either side, label or key)")
    g.add_argument(
        "--min-gap", type=float, metavar="US", help="only fusions whose medians differ by at least US microseconds"
    )
    p.set_defaults(handler=_cmd_report)

    p = sub.add_parser(
        "roundtrip",
        help="replay every distinct fusion of a live capture from its faithful repro, and diff",
        description="For a live capture: write the faithful repro of each distinct fusion (same definition "
        "graph, input signature and options) to DIR/scripts, replay them in fresh processes, one worker per "
        "visible GPU (CUDA_VISIBLE_DEVICES or torch's count; each worker starts its next process while one "
        "runs, and lets it touch the GPU only in its turn), keep each replay in DIR/replays (a rerun resumes "
        "and skips those; Ctrl-C keeps what finished), then write the merged replay DIR/replay.json and the diff "
        "record DIR/diff.json, and print every fusion live vs replay ranked by the time nothing recorded "
        "explains, with the step's totals. Progress and an ETA go to stderr. Exit 0: every fusion replayed at "
        "its live speed; 1: a speed differs, a replay failed or is missing; 2: error.",
    )
    p.add_argument(
        "live",
        nargs="+",
        metavar="LIVE",
        help="live capture (.json), or the per-rank captures of one torchrun session (files, or a folder of "
        "NAME.rank<N>.json): a fusion every rank ran alike is replayed once, and each rank gets a summary row",
    )
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="DIR",
        help="directory for the scripts, replays, merged replay and diff",
    )
    p.add_argument(
        "--device",
        type=int,
        nargs="+",
        metavar="N",
        help="replay on these GPUs only (indices among the visible ones; default: every visible GPU)",
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--isolation", choices=("fusion",), default="fusion", help="fusion: a fresh process per fusion (default)"
    )
    g.add_argument("--batch", type=int, metavar="N", help="N scripts per fresh process: faster, less isolated")
    p.add_argument(
        "--no-prestart",
        action="store_true",
        help="start each replay process only in its turn (by default a worker's next process starts, and imports "
        "torch and nvFuser, while one runs): slower; starting ahead moved no replayed median by more than 1 %% on the H200",
    )
    p.add_argument(
        "--timeout", type=float, default=900.0, help="seconds before one replay process is stopped (default 900)"
    )
    p.add_argument("--top", type=int, metavar="N", help="print only the N fusions with the most unexplained time")
    p.add_argument(
        "--cuda-source", action="store_true", help="also store the generated CUDA source text (the diff compares it)"
    )
    _add_protocol_options(p)
    p.set_defaults(handler=_cmd_roundtrip, save_inputs=False)

    p = sub.add_parser(
        "demo",
        help="the seed case study on an embedded default",
        description="On a machine with a CUDA GPU, Thunder and nvFuser: capture the seed model's forward "
        "live, replay one repro, and diff them. Elsewhere: diff the bundled captures recorded on an H200.",
    )
    p.add_argument("--offline", action="store_true", help="use the bundled captures even when a GPU is present")
    p.add_argument("--workdir", default="fusiondiff-demo", help="where the live demo writes its captures")
    p.set_defaults(handler=_cmd_demo)
    return parser


def _recording_options(args: argparse.Namespace) -> RecordingOptions:
    """The options of ``capture`` and ``replay`` as one record (``replay`` has no ``--only``)."""
    from fusiondiff.model import TimingProtocol
    from fusiondiff.options import DEFAULT_TIMER, RecordingOptions, timer_name

    if args.samples < 1 or args.warmup < 0:
        raise FusionDiffError("--samples must be at least 1 and --warmup at least 0")
    timer = getattr(args, "timer", DEFAULT_TIMER)
    method = DEFAULT_TIMER if timer == "both" else timer_name(timer)
    return RecordingOptions(
        protocol=TimingProtocol(method=method, warmup=args.warmup, samples=args.samples, l2_mode=args.l2),
        only=tuple(getattr(args, "only", None) or ()),
        save_inputs=args.save_inputs,
        cuda_source=args.cuda_source,
        communication=getattr(args, "communication", True),
    )


def _split_script_args(args: argparse.Namespace) -> None:
    """``fusiondiff capture SCRIPT ARGS -o OUT`` (the issue's form): argparse hands everything after
    SCRIPT to the script, so fusiondiff's own options are taken back out of it, up to a ``--``."""
    tokens = list(args.args)
    ours, theirs = (tokens[: tokens.index("--")], tokens[tokens.index("--") + 1 :]) if "--" in tokens else (tokens, [])
    options = argparse.ArgumentParser(add_help=False)
    _add_capture_options(options)
    for action in options._actions:
        action.default = argparse.SUPPRESS  # only what was given after SCRIPT overrides what came before
    found, rest = options.parse_known_args(ours)
    for name, value in vars(found).items():
        setattr(args, name, value)
    args.args = rest + theirs


def _cmd_capture(args: argparse.Namespace) -> int:
    from fusiondiff.store import check_not_input

    _split_script_args(args)
    if not args.output:
        raise FusionDiffError("capture needs -o/--output FILE.json")
    from fusiondiff.distributed import rank_from_env
    from fusiondiff.live import capture_script, output_path

    check_not_input(output_path(args.output), [args.script])
    if args.timer == "both":
        raise FusionDiffError(
            "--timer both needs two processes (CUPTI takes one subscriber per process) and a live session "
            "runs once: capture with --timer kineto, then `fusiondiff repro` and `fusiondiff replay "
            "--timer both` on the repro scripts"
        )
    path = capture_script(
        args.script,
        args.args,
        output=args.output,
        options=_recording_options(args),
        progress=_progress,
    )
    info = rank_from_env()
    # every rank prints its own line: one "wrote live.json" per rank hid that only one file was left
    where = "" if info is None else f" (rank {info.rank} of {info.world_size}; each rank writes its own file)"
    print(f"wrote {printable(str(path))}{where}", file=sys.stderr)
    return EXIT_OK


def _cmd_replay(args: argparse.Namespace) -> int:
    from fusiondiff.store import check_not_input

    check_not_input(args.output, [*args.scripts, args.inputs])
    from fusiondiff.options import NVFUSER, TIMERS
    from fusiondiff.replay.runner import replay_scripts

    options = _recording_options(args)
    if args.timer != "both":
        path = replay_scripts(
            args.scripts,
            output=args.output,
            options=options,
            inputs_capture=args.inputs,
            in_process=args.in_process,
            timeout_s=args.timeout,
            progress=_progress,
            device=args.device,
        )
        print(f"wrote {printable(str(path))}", file=sys.stderr)
        return EXIT_OK
    if args.in_process:
        raise FusionDiffError("--timer both runs one child process per timer: it cannot run --in-process")
    outputs = timer_outputs(args.output)
    check_not_input(outputs[NVFUSER], [*args.scripts, args.inputs])
    paths = []
    for timer in TIMERS:
        _progress(f"fusiondiff: replaying with --timer {timer} in its own process")
        paths.append(
            replay_scripts(
                args.scripts,
                output=outputs[timer],
                options=options.with_timer(timer),
                inputs_capture=args.inputs,
                timeout_s=args.timeout,
                progress=_progress,
                device=args.device,
            )
        )
        print(f"wrote {printable(str(paths[-1]))}", file=sys.stderr)
    return _print_timers(str(paths[0]), str(paths[1]), 5.0)


def timer_outputs(output: str) -> dict[str, str]:
    """Where ``replay --timer both`` writes each timer's capture: OUTPUT for kineto, OUTPUT with
    ``.nvfuser.json`` for nvfuser."""
    from fusiondiff.model import KINETO, NVFUSER

    stem = output[: -len(".json")] if output.endswith(".json") else output
    return {KINETO: output, NVFUSER: f"{stem}.nvfuser.json"}


def _cmd_timers(args: argparse.Namespace) -> int:
    if not 0 <= args.tolerance < 1000:
        raise FusionDiffError("--tolerance is a percentage: at least 0")
    return _print_timers(args.a, args.b, args.tolerance)


def _print_timers(a: str, b: str, tolerance_pct: float) -> int:
    from fusiondiff.diff.timers import reconcile
    from fusiondiff.report.timers_text import render_reconciliation
    from fusiondiff.store import load_capture

    result = reconcile(load_capture(a), load_capture(b), tolerance_pct / 100)
    # fusion and kernel names come from the captures: each line escaped
    sys.stdout.write("".join(printable(line) + "\n" for line in render_reconciliation(result).splitlines()))
    return EXIT_OK if result.agree else EXIT_DISCREPANCY


def _cmd_repro(args: argparse.Namespace) -> int:
    from fusiondiff.replay.repro import write_repros

    def note(message: str) -> None:
        print(f"fusiondiff repro: warning: {printable(message)}", file=sys.stderr)

    for path in write_repros(args.capture, args.output, fusion=args.fusion, on_note=note):
        print(f"wrote {printable(str(path))}", file=sys.stderr)
    return EXIT_OK


def _cmd_diff(args: argparse.Namespace) -> int:
    from fusiondiff.store import check_not_input, load_capture, write_text

    if args.json:
        check_not_input(args.json, [args.a, args.b])
    # Read both before importing the differ (scipy takes a second or two): a bad file fails at once.
    a, b = load_capture(args.a), load_capture(args.b)
    from fusiondiff.diff.core import describe_source, diff
    from fusiondiff.report.diff_text import render_diff_text

    result = diff(a, b, source_a=describe_source(args.a, a), source_b=describe_source(args.b, b))
    unwritten = None
    record = ""
    if args.json or args.format == "json":
        # the exported diff record: schema_version, both environments and protocols, the samples
        from fusiondiff.report.interface import DiffReport
        from fusiondiff.report.paths import display_paths
        from fusiondiff.report.record import dumps_diff_record

        path_a, path_b = display_paths([args.a, args.b])
        record = dumps_diff_record(DiffReport(result, a, b, path_a, path_b))
    if args.json:
        try:
            write_text(args.json, record)
        except OutputError as exc:
            unwritten = exc  # the report is still printed, then the error
    _emit(record if args.format == "json" else render_diff_text(result))
    if unwritten is not None:
        raise unwritten
    return result.exit_code(strict=args.strict)


def _cmd_ranks(args: argparse.Namespace) -> int:
    from fusiondiff.diff.ranks import diff_ranks, load_rank_captures
    from fusiondiff.report.ranks_text import render_ranks_text

    result = diff_ranks(load_rank_captures(args.captures))
    _emit(render_ranks_text(result))
    return result.exit_code(strict=args.strict)


_SUFFIX_FORMATS = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".json": "json", ".txt": "text"}


def _cmd_report(args: argparse.Namespace) -> int:
    from pathlib import Path

    from fusiondiff.report import FORMATS, get_renderer
    from fusiondiff.report.record import open_report
    from fusiondiff.store import check_not_input, write_text

    name = args.format or _SUFFIX_FORMATS.get(Path(args.output).suffix.lower() if args.output else "", "text")
    if name not in FORMATS:
        raise FusionDiffError(f"unknown --format {name!r}; choose one of {', '.join(FORMATS)}")
    from fusiondiff.report.filters import Selection, select

    renderer = get_renderer(name)
    if args.output:
        check_not_input(args.output, list(args.inputs))
    report = open_report(args.inputs)
    min_gap_ns = None if args.min_gap is None else args.min_gap * 1000
    text = renderer.render(select(report, Selection(top=args.top, fusion=args.fusion, min_gap_ns=min_gap_ns)))
    if args.output:
        write_text(args.output, text)
        print(f"wrote {args.output} ({name})", file=sys.stderr)
    else:
        _emit(text)
    return report.result.exit_code(strict=getattr(args, "strict", False))


def _cmd_show(args: argparse.Namespace) -> int:
    import dataclasses
    import math

    from fusiondiff.report.text import render_capture_text
    from fusiondiff.store import dumps_capture, load_capture

    capture = load_capture(args.capture)
    fusions = list(capture.fusions)
    if args.fusion is not None:
        fusions = [f for f in fusions if args.fusion in (f.name, f.key)]
        if not fusions:
            names = ", ".join(dict.fromkeys(f.name for f in capture.fusions))
            raise FusionDiffError(f"no fusion named {args.fusion!r} in {args.capture}; it holds: {names}")
    if args.top is not None:
        if args.top < 1:
            raise FusionDiffError("--top needs a number of fusions, 1 or more")
        fusions = sorted(
            fusions, key=lambda f: -1.0 if math.isnan(f.timing.median_ns) else f.timing.median_ns, reverse=True
        )[: args.top]
    shown = dataclasses.replace(capture, fusions=tuple(fusions))
    if len(fusions) < len(capture.fusions):
        print(f"fusiondiff show: {len(fusions)} of {len(capture.fusions)} fusion(s) shown", file=sys.stderr)
    _emit(dumps_capture(shown) if args.format == "json" else render_capture_text(shown))
    return EXIT_OK


def _cmd_roundtrip(args: argparse.Namespace) -> int:
    from fusiondiff.roundtrip import choose_devices, render_summary, roundtrip, visible_devices

    if args.top is not None and args.top < 1:
        raise FusionDiffError("--top needs a number of fusions, 1 or more")
    result = roundtrip(
        args.live,
        args.output,
        devices=None if args.device is None else choose_devices(args.device, visible_devices()),
        batch=args.batch if args.batch is not None else 1,
        options=_recording_options(args),
        timeout_s=args.timeout,
        progress=_progress,
        prestart=not args.no_prestart,
    )
    _emit(render_summary(result, top=args.top))
    return EXIT_INTERRUPTED if result.interrupted else result.exit_code


def _cmd_demo(args: argparse.Namespace) -> int:
    from fusiondiff.demo import run_demo

    return run_demo(offline=args.offline, workdir=args.workdir, progress=_progress, out=_ReportStream())


def _progress(message: str) -> None:
    print(printable(message), file=sys.stderr, flush=True)


class Terminated(BaseException):
    """SIGTERM, raised where the program is so that ``finally`` blocks run (an atomic write removes
    its temporary file) before the command exits with :data:`EXIT_TERMINATED`."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated


class _StdoutError(OutputError):
    """The report could not be written to stdout (a full device, a closed pipe)."""

    def __init__(self, exc: OSError) -> None:
        super().__init__(f"cannot write the report to stdout: {exc.strerror or exc}")
        self.broken_pipe = exc.errno == errno.EPIPE


def _emit(text: str) -> None:
    """Write a report to stdout, all of it: a full disk or a closed pipe is an error now, not a
    traceback when the interpreter flushes at exit."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as exc:
        raise _StdoutError(exc) from None


class _ReportStream:
    """stdout for code that writes its report as it goes (``out.write``), failing like :func:`_emit`."""

    def write(self, text: str) -> int:
        _emit(text)
        return len(text)

    def flush(self) -> None:
        _emit("")


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so what is still buffered for a failed stdout cannot fail again
    when the interpreter exits."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _say(command: str | None, message: str) -> None:
    """One line on stderr, ``fusiondiff <command>: <message>``, escaped: messages quote captures."""
    try:
        print(f"fusiondiff{' ' + command if command else ''}: {printable(message)}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass  # stderr is gone too: the exit code is all that is left


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    command = None
    previous = _on_sigterm(_raise_terminated)
    # a stop request seen at once even while the main thread waits in C++ (a capture's backward)
    termination.watch()
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        command = args.command
        if not getattr(args, "handler", None):
            parser.print_help(sys.stderr)
            return EXIT_ERROR
        code = args.handler(args)
        try:
            sys.stdout.flush()
        except OSError as exc:
            raise _StdoutError(exc) from None
        return code
    except _StdoutError as exc:
        _silence_stdout()
        if not exc.broken_pipe:  # a reader that stopped reading (`| head`) wanted no more
            _say(command, f"error: {exc}")
        return EXIT_ERROR
    except FusionDiffError as exc:
        _say(command, f"error: {exc}")
        return EXIT_ERROR
    except OSError as exc:
        # The file system failed under a command (a read error, a full disk, a report that went to
        # stdout as it was made): one line, no traceback.
        where = f": {exc.filename}" if exc.filename else ""
        try:
            sys.stdout.flush()
        except OSError:
            _silence_stdout()
        _say(command, f"error: {exc.strerror or exc}{where}")
        return EXIT_ERROR
    except KeyboardInterrupt:
        _say(command, "interrupted")
        return EXIT_INTERRUPTED
    except Terminated:
        _say(command, "terminated")
        return EXIT_TERMINATED
    finally:
        _on_sigterm(previous)


def _on_sigterm(handler: object) -> object:
    """Install ``handler`` for SIGTERM; returns the one it replaces. Only the main thread may set
    handlers: elsewhere (main() called from a thread) SIGTERM keeps its handler."""
    if handler is None or threading.current_thread() is not threading.main_thread():
        return None
    try:
        return signal.signal(signal.SIGTERM, handler)  # type: ignore[arg-type]
    except (ValueError, OSError):
        return None
