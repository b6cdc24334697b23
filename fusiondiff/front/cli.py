"""Command-line front end. It parses arguments, calls the library, and prints: reports to stdout,
notes (fitted to its width) and errors to stderr. Every expected failure is one line on stderr and
exit code 2, never wrapped: also an output that cannot be written (stdout included), Ctrl-C (exit
130) and SIGTERM (exit 143, after removing any half-written file). Text from a capture reaches the
terminal escaped.

Top-level imports stay light (no records, no numpy): Ctrl-C while they load is handled by the
console script's entry (:mod:`fusiondiff.console`), and the commands import what they need. A
command started with a standard stream closed (``>&-``) gets ``/dev/null`` at that descriptor, so
no file it opens takes the number; a report that then has nowhere to go is one error line, exit 2
(:mod:`fusiondiff.front.stdio`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from fusiondiff.front.blas import one_blas_thread
from fusiondiff.front.cli_options import add_capture_options, gates, narrowed
from fusiondiff.front.cli_parser import build_parser
from fusiondiff.front.stdio import StdoutError, emit, guard_closed_streams, note, output_width, silence_stdout
from fusiondiff.front.stops import on_sigterm, raise_terminated, stop_behind
from fusiondiff.records import termination
from fusiondiff.records.errors import FusionDiffError, OutputError, ReportError
from fusiondiff.records.escape import printable, printable_lines

if TYPE_CHECKING:
    from fusiondiff.records.options import RecordingOptions
    from fusiondiff.roundtrip.slurm import SlurmExecutor

EXIT_OK = 0
EXIT_DISCREPANCY = 1
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130
"""128 + SIGINT, as shells report a command stopped by Ctrl-C."""
EXIT_TERMINATED = 143
"""128 + SIGTERM."""


def _recording_options(args: argparse.Namespace) -> RecordingOptions:
    """The options of ``capture`` and ``replay`` as one record (``replay`` has no ``--only``)."""
    from fusiondiff.front.block_options import timeline_fields
    from fusiondiff.records.model import TimingProtocol
    from fusiondiff.records.options import DEFAULT_TIMER, RecordingOptions, timer_name

    timer = getattr(args, "timer", DEFAULT_TIMER)
    method = DEFAULT_TIMER if timer == "both" else timer_name(timer)
    return RecordingOptions(
        protocol=TimingProtocol(method=method, warmup=args.warmup, samples=args.samples, l2_mode=args.l2),
        only=tuple(getattr(args, "only", None) or ()),
        save_inputs=args.save_inputs,
        cuda_source=args.cuda_source,
        communication=getattr(args, "communication", True),
        peak=getattr(args, "peak", True),
        **timeline_fields(args),
    )


def _split_script_args(args: argparse.Namespace) -> None:
    """``fusiondiff capture SCRIPT ARGS -o OUT`` (the issue's form): argparse hands everything after
    SCRIPT to the script, so fusiondiff's own options are taken back out of it, up to a ``--``."""
    tokens = list(args.args)
    ours, theirs = (tokens[: tokens.index("--")], tokens[tokens.index("--") + 1 :]) if "--" in tokens else (tokens, [])
    options = argparse.ArgumentParser(prog="fusiondiff capture", add_help=False)
    add_capture_options(options)
    for action in options._actions:
        action.default = argparse.SUPPRESS  # only what was given after SCRIPT overrides what came before
    found, rest = options.parse_known_args(ours)
    for name, value in vars(found).items():
        setattr(args, name, value)
    args.args = rest + theirs


_PATH_OPTIONS = {
    "output": "-o/--output",
    "json": "--json",
    "inputs": "--inputs",
    "workdir": "--workdir",
    "capture": "CAPTURE",
    "script": "SCRIPT",
    "scripts": "SCRIPT",
    "a": "A",
    "b": "B",
    "live": "LIVE",
    "captures": "DIR_OR_FILE",
}
"""Arguments that name files, by their ``dest``, as ``--help`` names them."""


def _check_arguments(args: argparse.Namespace) -> None:
    """What argparse's types do not refuse: an empty path (``-o ''`` named the current folder, or
    nothing at all)."""
    for dest, flag in _PATH_OPTIONS.items():
        value = getattr(args, dest, None)
        if value == "" or (isinstance(value, list) and "" in value):
            raise FusionDiffError(f"{flag}: an empty path names no file; give one")


def _cmd_capture(args: argparse.Namespace) -> int:
    from fusiondiff.io.files import check_not_input

    _split_script_args(args)
    if args.output is None:
        raise FusionDiffError("capture needs -o/--output FILE.json")
    _check_arguments(args)  # again: -o may come after SCRIPT
    from fusiondiff.front.live import capture_script, output_path
    from fusiondiff.records.distributed import rank_from_env

    check_not_input(output_path(args.output), [args.script])
    path = capture_script(
        args.script,
        args.args,
        output=args.output,
        options=_recording_options(args),
        progress=note,
    )
    info = rank_from_env()
    # every rank prints its own line: one "wrote live.json" per rank hid that only one file was left
    where = "" if info is None else f" (rank {info.rank} of {info.world_size}; each rank writes its own file)"
    note(f"wrote {path}{where}")
    return EXIT_OK


def _cmd_replay(args: argparse.Namespace) -> int:
    from fusiondiff.io.files import check_not_input

    check_not_input(args.output, [*args.scripts, args.inputs, args.thunder_stream])
    from fusiondiff.records.options import NVFUSER, TIMERS, timer_outputs
    from fusiondiff.replay.runner import replay_in_processes, replay_scripts

    options = _recording_options(args)
    if args.processes > 1 and (args.in_process or args.timer == "both"):
        raise FusionDiffError("--processes runs fresh processes of one timer: not with --in-process or --timer both")
    if args.timer != "both":
        path = replay_in_processes(
            args.scripts,
            processes=args.processes,
            output=args.output,
            options=options,
            inputs_capture=args.inputs,
            in_process=args.in_process,
            timeout_s=args.timeout,
            progress=note,
            device=args.device,
            thunder_stream=args.thunder_stream,
        )
        note(f"wrote {path}")
        return EXIT_OK
    if args.in_process:
        raise FusionDiffError("--timer both runs one child process per timer: it cannot run --in-process")
    outputs = timer_outputs(args.output)
    check_not_input(outputs[NVFUSER], [*args.scripts, args.inputs])
    paths = []
    for timer in TIMERS:
        note(f"fusiondiff: replaying with --timer {timer} in its own process")
        paths.append(
            replay_scripts(
                args.scripts,
                output=outputs[timer],
                options=options.with_timer(timer),
                inputs_capture=args.inputs,
                timeout_s=args.timeout,
                progress=note,
                device=args.device,
                thunder_stream=args.thunder_stream,
            )
        )
        note(f"wrote {paths[-1]}")
    return _print_timers(str(paths[0]), str(paths[1]), 5.0)


def _cmd_timers(args: argparse.Namespace) -> int:
    return _print_timers(args.a, args.b, args.tolerance)


def _print_timers(a: str, b: str, tolerance_pct: float) -> int:
    from fusiondiff.diff.timers import reconcile
    from fusiondiff.io.store import load_capture
    from fusiondiff.report.formats.timers_text import render_reconciliation

    result = reconcile(load_capture(a), load_capture(b), tolerance_pct / 100)
    emit(render_reconciliation(result), fit=True)
    return EXIT_OK if result.agree else EXIT_DISCREPANCY


def _cmd_repro(args: argparse.Namespace) -> int:
    from fusiondiff.replay.repro import write_repros

    def warn(message: str) -> None:
        note(f"fusiondiff repro: warning: {message}")

    written = write_repros(
        args.capture, args.output, fusion=args.fusion, on_note=warn, every_record=args.every_record, progress=note
    )
    for path in written:
        note(f"wrote {path}")
    return EXIT_OK


def _cmd_diff(args: argparse.Namespace) -> int:
    from fusiondiff.io.files import check_not_input, write_chunks
    from fusiondiff.io.store import load_capture

    if args.json:
        check_not_input(args.json, [args.a, args.b, *args.also_a, *args.also_b])
    # Read both before importing the differ (numpy and the rules): a bad file fails at once.
    a, b = load_capture(args.a), load_capture(args.b)
    if args.also_a or args.also_b:
        from fusiondiff.io.captures import pooled

        a, b = pooled("A", a, args.also_a, note), pooled("B", b, args.also_b, note)
    from fusiondiff.diff.core import diff
    from fusiondiff.report.interface import DiffReport
    from fusiondiff.report.terminal import render_diff_terminal
    from fusiondiff.report.words.paths import display_paths, source_label

    result = diff(a, b, source_a=source_label(args.a, a.source), source_b=source_label(args.b, b.source))
    path_a, path_b = display_paths([args.a, args.b])
    whole = DiffReport(result, a, b, path_a, path_b)
    report = narrowed(whole, args)
    if report.selection and args.format == "json":
        raise ReportError("the diff record is always whole: leave out --top, --fusion and --min-gap with --format json")
    unwritten = None
    if (
        args.json or args.format == "json"
    ):  # the exported diff record (report/formats/record.py): the whole diff, B as a delta
        from fusiondiff.report.formats.record import record_chunks
    if args.json:
        try:
            write_chunks(args.json, record_chunks(whole))
        except OutputError as exc:
            unwritten = exc  # the report is still printed, then the error
    if args.format == "json":
        emit(chunk.decode() for chunk in record_chunks(whole))
    else:
        emit(render_diff_terminal(report, output_width()))
    if unwritten is not None:
        raise unwritten
    return report.result.exit_code(gates=gates(args))


def _cmd_ranks(args: argparse.Namespace) -> int:
    from fusiondiff.diff.ranks import diff_ranks
    from fusiondiff.front.api import load_rank_captures
    from fusiondiff.report.formats.ranks_text import render_ranks_text

    result = diff_ranks(load_rank_captures(args.captures))
    emit(render_ranks_text(result), fit=True)
    return result.exit_code(gates=gates(args))


def _cmd_report(args: argparse.Namespace) -> int:
    from fusiondiff.front.api import open_report
    from fusiondiff.io.files import check_not_input, check_place, write_chunks
    from fusiondiff.report import format_for_path, get_renderer

    name = args.format or (format_for_path(args.output) if args.output else "text")
    renderer = get_renderer(name, sm_tracks=args.sm_tracks)
    if args.output:
        check_not_input(args.output, list(args.inputs))
        check_place(args.output)
    report = narrowed(open_report(args.inputs), args)
    chunks = (renderer if args.output else renderer.laid_out(output_width())).chunks(report)
    if args.output:  # written as it is made: a report of a whole session is never held whole
        write_chunks(args.output, (chunk.encode("utf-8") for chunk in chunks))
        note(f"wrote {args.output} ({name})")
    else:
        emit(printable_lines(chunk) for chunk in chunks)  # names from the captures reach the terminal escaped
    # written is done: `report A B -o r.html && xdg-open r.html` opens the page; scripts that want the
    # verdict ask for it, as `git diff --exit-code` does
    if not args.exit_code:
        return EXIT_OK
    return report.result.exit_code(gates=gates(args))


def _cmd_show(args: argparse.Namespace) -> int:
    import dataclasses

    from fusiondiff.io.store import dumps_capture, load_capture
    from fusiondiff.records.fusion_spec import capture_positions
    from fusiondiff.report.text import render_capture_text

    capture = load_capture(args.capture)
    shown = capture_positions(capture.fusions, args.fusion, args.top, args.capture)
    if len(shown) < len(capture.fusions):
        note(f"fusiondiff show: {len(shown)} of {len(capture.fusions)} fusion(s) shown")
    if args.format == "json":
        emit(dumps_capture(dataclasses.replace(capture, fusions=tuple(capture.fusions[i] for i in shown))))
    else:
        emit(render_capture_text(capture, shown, width=output_width()))
    return EXIT_OK


def _cmd_roundtrip(args: argparse.Namespace) -> int:
    from fusiondiff.roundtrip import choose_devices, render_summary, roundtrip, visible_devices

    executor = _executor(args)  # first: --executor slurm without submitit says so before anything runs
    result = roundtrip(
        args.live,
        args.output,
        devices=None if args.device is None else choose_devices(args.device, visible_devices()),
        batch=args.batch,
        options=_recording_options(args),
        timeout_s=args.timeout,
        progress=note,
        prestart=not (args.no_prestart or args.isolation == "fusion"),
        ahead=args.ahead,
        prepare=args.prepare_ahead,
        executor=executor,
        forked=args.processes == "forked",
    )
    emit(render_summary(result, top=args.top, width=output_width()))
    return EXIT_INTERRUPTED if result.interrupted else result.exit_code_for(gates(args))


def _executor(args: argparse.Namespace) -> SlurmExecutor | None:
    """The round trip's executor: None for local workers, else the Slurm one (which needs submitit)."""
    if args.executor == "local":
        return None
    if args.device is not None:
        raise FusionDiffError("--device picks GPUs of this machine; with --executor slurm, use --gpus-per-task")
    from fusiondiff.roundtrip.slurm import SlurmExecutor, SlurmSettings

    return SlurmExecutor(SlurmSettings(args.partition, args.gpus_per_task, args.batches_per_task, args.time_limit))


def _cmd_sm_timeline(args: argparse.Namespace) -> int:
    from fusiondiff.front.sm_timeline import record_live_side

    path = record_live_side(
        args.live,
        args.output,
        args.sm_timeline_runs,
        args.sm_timeline_max_overhead / 100,
        timeout_s=args.timeout,
        progress=note,
        device=args.device,
    )
    note(f"wrote {path}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from fusiondiff.front.demo import run_demo
    from fusiondiff.front.stdio import ReportStream

    out, width = ReportStream(), output_width()
    return run_demo(offline=args.offline, workdir=args.workdir, progress=note, out=out, width=width)


def _say(command: str | None, message: str) -> None:
    """One line on stderr, never wrapped, ``fusiondiff <command>: <message>``, escaped: messages quote captures."""
    try:
        print(f"fusiondiff{' ' + command if command else ''}: {printable(message)}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass  # stderr is gone too: the exit code is all that is left


_HANDLERS = {
    "capture": _cmd_capture,
    "replay": _cmd_replay,
    "timers": _cmd_timers,
    "repro": _cmd_repro,
    "diff": _cmd_diff,
    "ranks": _cmd_ranks,
    "show": _cmd_show,
    "report": _cmd_report,
    "roundtrip": _cmd_roundtrip,
    "demo": _cmd_demo,
    "sm-timeline": _cmd_sm_timeline,
}
"""Each subcommand's handler, by its name (:func:`fusiondiff.front.cli_parser.build_parser`)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    command = None
    previous = on_sigterm(raise_terminated)
    # a stop request seen at once even while the main thread waits in C++ (a capture's backward)
    termination.watch()
    try:
        guard_closed_streams()
        parser = build_parser()
        args = parser.parse_args(argv)
        command = args.command
        if command is None:
            parser.print_help(sys.stderr)
            return EXIT_ERROR
        _check_arguments(args)
        with one_blas_thread(command):
            code = _HANDLERS[command](args)
        try:
            sys.stdout.flush()
        except OSError as exc:
            raise StdoutError(exc) from None
        return code
    except StdoutError as exc:
        silence_stdout()
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
            silence_stdout()
        _say(command, f"error: {exc.strerror or exc}{where}")
        return EXIT_ERROR
    except BaseException as exc:
        stop = stop_behind(exc)  # Ctrl-C or SIGTERM, also where Python wrapped it
        if stop is None:
            raise
        _say(command, stop)
        return EXIT_INTERRUPTED if stop == "interrupted" else EXIT_TERMINATED
    finally:
        on_sigterm(previous)
