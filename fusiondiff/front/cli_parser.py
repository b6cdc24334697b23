"""The command line's arguments: every subcommand's options and help texts, and nothing else.

The handlers are in :mod:`fusiondiff.front.cli`, found by the subcommand's name. Ranges and choices are
argparse's (``type=``, ``choices=``, ``required=``), so a bad value is its usage and one line, exit 2.
Imports stay light: the table of report formats (:mod:`fusiondiff.report`) and nothing with records.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

from fusiondiff.front.block_options import add_timeline_options
from fusiondiff.front.cli_options import (
    COUNT,
    EXIT_CODES,
    SECONDS,
    add_capture_options,
    add_gate_options,
    add_pool_options,
    add_protocol_options,
    add_timer_option,
    number,
)
from fusiondiff.records.version import __version__
from fusiondiff.replay.stages import DEFAULT_AHEAD, DEFAULT_FORKED, DEFAULT_PREPARE, PREPARE_CHOICES

PROCESS_STARTS = ("fresh", "forked")
"""``roundtrip --processes``: how a replay process started ahead begins."""

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


FUSION_HELP = (
    "#N, its position from #0 as `fusiondiff show` numbers them, or a name (nvFusion0), name and pass "
    "('nvFusion0 [forward]'), key (forward/nvFusion0/1a2b3c4d5e6f) or the start of a key"
)
"""The ``--fusion`` grammar of every command, in words (:mod:`fusiondiff.report.views.filters`)."""


class OneLineParser(argparse.ArgumentParser):
    """argparse, with every refusal one line like fusiondiff's other errors (exit 2): the command,
    what is wrong, and where the help is, instead of the usage block first."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="fusiondiff", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"fusiondiff {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "capture",
        # -o is required but may follow SCRIPT, which argparse's REMAINDER would hand to the script:
        # it is taken back after parsing (_split_script_args), and the usage says it is required
        usage="fusiondiff capture -o OUTPUT [options] SCRIPT [ARGS ...]   (options may also follow SCRIPT)",
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
    add_capture_options(p)

    p = sub.add_parser(
        "replay",
        help="run repro scripts in a fresh process and record their fusions",
        description="Run repro scripts (nvfuser_direct, or legacy `from nvfuser import ...`) one after the other "
        "in one fresh process, intercept every FusionDefinition.execute and record it like the live capture "
        "does, in one capture. The process's whole output goes to a log beside the capture (OUTPUT with .log). "
        "A fusion whose execution fails (an illegal address, a compile error) is kept with its inputs and the "
        "failure: the capture is written and the command exits 2, so `fusiondiff diff` can say why.",
    )
    p.add_argument(
        "scripts",
        nargs="+",
        metavar="SCRIPT",
        help="repro scripts (.py), or directories of them; a folder Thunder's report functions wrote "
        "(thunderfx_benchmark_report, save_thunderfx_repros) replays one nvFuser script per nvFusion region, "
        "named after it, and lists every other script as skipped",
    )
    p.add_argument(
        "--thunder-stream",
        metavar="FILE",
        help="what Thunder's report printed (its stream, saved to a file): its WallTime and KernelTime medians "
        "are kept with the replay and shown beside fusiondiff's by `fusiondiff diff`",
    )
    p.add_argument("-o", "--output", required=True, help="capture file to write (.json)")
    p.add_argument(
        "--inputs", metavar="CAPTURE", help="replace the script's inputs by the live side's (exact or synthesized)"
    )
    p.add_argument("--in-process", action="store_true", help="run in this process (a control for process effects)")
    p.add_argument(
        "--processes",
        type=number(int, 1, 101),
        default=1,
        metavar="K",
        help="replay in K fresh processes one after the other, each placing its inputs afresh, pooled into one "
        "capture: `fusiondiff diff` then judges each fusion against the spread measured between them (at least "
        "3) instead of the recorded calibration (default 1; K times the replay's time)",
    )
    p.add_argument(
        "--device",
        type=number(int, 0),
        metavar="N",
        help="replay on CUDA device N (every cuda:K the scripts pin is moved there); by default an ordinal "
        "this machine lacks is moved to the current device, with a warning",
    )
    p.add_argument(
        "--timeout",
        type=SECONDS,
        default=900.0,
        help="seconds before the child process is stopped (default 900)",
    )
    p.add_argument("--save-inputs", action="store_true", help="also save the exact input tensors (safetensors)")
    p.add_argument("--cuda-source", action="store_true", help="also store the generated CUDA source text")
    add_protocol_options(p)
    add_timer_option(p, both=True)

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
        type=number(float, 0, 1000),
        default=5.0,
        metavar="PCT",
        help="medians further apart than this (percent of A's) disagree (default 5)",
    )

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
        help="script to write; with several fusions, a directory that gets one script per distinct fusion "
        "(<trace>_<name>.py, with the definition hash and then #N added where names would clash)",
    )
    p.add_argument(
        "--every-record",
        action="store_true",
        help="one script per record; by default one per distinct fusion (same definition graph, inputs' "
        "signature and options), for its first record, as the round trip replays them",
    )
    p.add_argument(
        "--fusion",
        metavar="NAME",
        help=f"only this fusion: {FUSION_HELP}; records that share a key (one region run with an aligned and a "
        "misaligned input) are told apart by #N",
    )

    p = sub.add_parser(
        "diff",
        help="compare two captures and rank what explains the gap",
        description="Match the fusions and kernels of two captures, compare every recorded property and the "
        "timing distributions, and answer three questions apart, each with its verdict line, its ledger (the "
        "gap apportioned once to the root causes present) and its ranked findings: kernel time (whether B "
        "runs each fusion's kernels at A's speed, and why not), host time per call (fd.execute against "
        "fd.execute, and what a side's host makes its GPU wait) and repro fidelity (what B runs differently "
        "from A). " + EXIT_CODES,
    )
    p.add_argument("a", help="first capture (usually the live one)")
    p.add_argument("b", help="second capture (usually the replay)")
    add_pool_options(p)
    p.add_argument("--json", metavar="FILE", help="also write the diff record as JSON")
    p.add_argument("--format", choices=("text", "json"), default="text", help="what to print on stdout")
    add_gate_options(p)
    add_narrowing_options(p)

    p = sub.add_parser(
        "ranks",
        help="compare the per-rank captures of one torchrun session, rank stragglers",
        description="Diff each rank's capture (live.rank1.json, ...) against rank 0's: the same fusion across "
        "ranks, one verdict line per rank, then the ranks slower than rank 0 ranked by their fusions' total time "
        "gap per step, each with the top finding of its diff (another kernel variant, clocks, inputs, L2...). "
        "A rank's own device (cuda:1 for rank 1) and its rank fields are not differences. Exit codes as `diff`, "
        "over every rank: " + EXIT_CODES,
    )
    p.add_argument(
        "captures", nargs="+", metavar="DIR_OR_FILE", help="per-rank capture files, or a folder of NAME.rank<N>.json"
    )
    add_gate_options(p, " of a rank")

    p = sub.add_parser(
        "show",
        help="summarise one capture",
        description="Print a summary of a capture file: its fusions and kernels, each kernel's share of the "
        "GPU's measured DRAM peak, and those furthest from it.",
    )
    p.add_argument("capture", help="capture file (.json)")
    p.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text summary (default) or the capture record as JSON",
    )
    p.add_argument(
        "--top", type=COUNT, metavar="N", help="only the N fusions with the largest median time, largest first"
    )
    p.add_argument("--fusion", metavar="NAME", help=f"only the fusions this names: {FUSION_HELP}")

    p = sub.add_parser(
        "report",
        help="render a diff as Markdown, HTML, Perfetto trace, JSON record or text",
        description="Render the diff of two captures (or a diff record written before with --format json) "
        "as Markdown to paste into an issue, one self-contained HTML page with plots, a Perfetto trace "
        "(ui.perfetto.dev; --sm-tracks adds a track per SM), the JSON diff record, or the terminal text. "
        "Paths in the report are relative to the captures' folder.",
    )
    p.add_argument("inputs", nargs="+", metavar="FILE", help="two captures (A B), or one diff record (.json)")
    from fusiondiff.report import FORMATS, suffix_help

    p.add_argument(
        "--format",
        choices=FORMATS,
        help=f"what to write (default: from -o's file name: {suffix_help()}, each also with .gz for a gzipped "
        "file; without -o, text)",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write the report here instead of stdout")
    p.add_argument(
        "--exit-code",
        action="store_true",
        help="exit with the diff's code, as `fusiondiff diff` does (1: a speed differs, a side failed or a fusion "
        "is missing; 3: kernel time not measured), instead of 0 once the report is written; as `git diff --exit-code`",
    )
    p.add_argument(
        "--sm-tracks",
        action="store_true",
        help="perfetto only: a track per SM too, each CTA a slice where the block level was measured "
        "(--sm-timeline), else derived from grid, block and occupancy (off by default: they outweigh the rest)",
    )
    add_gate_options(p, " (with --exit-code)")
    add_narrowing_options(p)

    p = sub.add_parser(
        "roundtrip",
        help="replay every distinct fusion of a live capture from its faithful repro, and diff",
        description="For a live capture: write the faithful repro of each distinct fusion (same definition "
        "graph, input signature and options) to DIR/scripts, replay them in fresh processes, one worker per "
        "visible GPU (CUDA_VISIBLE_DEVICES or torch's count; each worker starts its next process while one "
        "runs, and lets it touch the GPU only in its turn), keep each replay in DIR/replays (a rerun resumes "
        "and skips those; Ctrl-C keeps what finished), then write the merged replay DIR/replay.json and the diff "
        "record DIR/diff.json, and print every fusion live vs replay ranked by the time nothing recorded "
        "explains, with the step's totals. Progress and an ETA go to stderr. Exit codes are the diff's (a replay "
        "that failed or is missing fails the kernel question): " + EXIT_CODES,
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
        type=number(int, 0),
        nargs="+",
        metavar="N",
        help="replay on these GPUs only (indices among the visible ones; default: every visible GPU)",
    )
    p.add_argument(
        "--batch",
        type=COUNT,
        default=1,
        metavar="N",
        help="N scripts per fresh process: faster, less isolated (default 1: a fresh process per fusion)",
    )
    # --isolation fusion (the reference: a fresh process per fusion, each started in its turn) is
    # still taken, as --no-prestart; not offered, a flag of one choice (new-user review, item 12)
    p.add_argument("--isolation", choices=("fusion",), help=argparse.SUPPRESS)
    p.add_argument(
        "--no-prestart",
        action="store_true",
        help="the reference way to replay: start each replay process only in its turn (by default each GPU's "
        "worker keeps --ahead processes started and prepared ahead); slower",
    )
    p.add_argument(
        "--ahead",
        type=COUNT,
        default=DEFAULT_AHEAD,
        metavar="K",
        help=f"replay processes each GPU's worker keeps started ahead of the one timing (default {DEFAULT_AHEAD}); "
        "each is still a fresh process with its own CUDA context, and one GPU times one replay at a time",
    )
    p.add_argument(
        "--prepare-ahead",
        choices=PREPARE_CHOICES,
        default=DEFAULT_PREPARE,
        help="how far a process started ahead goes before its turn: 'imports' (default: torch and nvFuser imported, "
        "nothing on the GPU; its context, compile and profiler start come in its turn), 'handover' (the same, but its "
        "turn starts as the replay before it has taken its samples, while that one writes and exits; its own samples "
        "wait for that exit; on the H200 its context, made as the one before exits, turned a fusion's verdict), "
        "'context' (also its CUDA "
        "context and the profiler opened once, no kernel launched; its compile runs in its turn beside the others' "
        "preparations, its samples after them; with --ahead 6, about a quarter of the reference's time on the "
        "H200, but idle contexts on the GPU slowed a fusion by 1-2 %% and one borderline verdict differed from "
        "the reference's in each of three sessions), or 'gpu' (also its script run and compiled; it moved "
        "verdicts on the H200); on the GPU only between other replays' samples, never during them",
    )
    p.add_argument(
        "--processes",
        choices=PROCESS_STARTS,
        default="forked" if DEFAULT_FORKED else "fresh",
        help="how a process started ahead begins: 'forked' (default: forked from one process per run that imported "
        "torch, nvFuser and what torch.profiler imports once and never touched CUDA; scripts that set NVFUSER_* "
        "variables of their own still start fresh) or 'fresh' (a new interpreter, which imports them itself, about "
        "8 s on the H200); either way each replay makes its own CUDA context",
    )
    p.add_argument(
        "--timeout",
        type=SECONDS,
        default=900.0,
        help="seconds before one replay process is stopped (default 900)",
    )
    p.add_argument("--top", type=COUNT, metavar="N", help="print only the N fusions with the most unexplained time")
    g = p.add_argument_group(
        "where the replays run",
        "--executor slurm submits them as a Slurm job array through submitit (pip install 'fusiondiff[cluster]'); "
        "DIR must be on a file system the nodes share. Each array task replays its batches on its node and writes "
        "to DIR as a local run does, so a rerun resumes either way; Ctrl-C cancels the jobs.",
    )
    g.add_argument(
        "--executor",
        choices=("local", "slurm"),
        default="local",
        help="local: child processes here, one worker per GPU (default); slurm: a Slurm job array",
    )
    g.add_argument("--partition", metavar="NAME", help="Slurm partition (default: the cluster's default)")
    g.add_argument(
        "--gpus-per-task", type=number(int, 0), default=1, metavar="N", help="GPUs per Slurm array task (default 1)"
    )
    g.add_argument(
        "--batches-per-task",
        type=COUNT,
        default=8,
        metavar="N",
        help="batches of --batch fusions per Slurm array task (default 8)",
    )
    g.add_argument(
        "--time-limit",
        type=COUNT,
        default=60,
        metavar="MIN",
        help="time limit of one Slurm array task, minutes (default 60)",
    )
    p.add_argument(
        "--cuda-source", action="store_true", help="also store the generated CUDA source text (the diff compares it)"
    )
    add_protocol_options(p)
    add_gate_options(p)
    p.set_defaults(save_inputs=False)

    p = sub.add_parser(
        "demo",
        help="the seed case study on an embedded default",
        description="On a machine with a CUDA GPU, Thunder and nvFuser: capture the seed model's forward "
        "live, replay one repro, and diff them. Elsewhere: diff the bundled captures recorded on an H200. "
        "Exits 0 once it ran: the diffs' findings are what it shows.",
    )
    p.add_argument("--offline", action="store_true", help="use the bundled captures even when a GPU is present")
    p.add_argument("--workdir", default="fusiondiff-demo", help="where the live demo writes its captures")

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
    p.add_argument("--device", type=number(int, 0), metavar="N", help="replay on CUDA device N")
    p.add_argument(
        "--timeout",
        type=SECONDS,
        default=900.0,
        help="seconds before the replay is stopped (default 900)",
    )
    add_timeline_options(p, flag=False)
    return parser


def add_narrowing_options(p: argparse.ArgumentParser) -> None:
    """``--top``, ``--fusion``, ``--min-gap``: the fusions a diff's answer speaks of, alike in
    ``diff`` and ``report`` (:mod:`fusiondiff.report.views.filters`)."""
    g = p.add_argument_group("narrowing (the verdicts, ledgers and gates then speak of the fusions shown)")
    g.add_argument("--top", type=COUNT, metavar="N", help="only the N matched fusions with the largest median gap")
    g.add_argument(
        "--fusion", metavar="NAME", help=f"only the fusions this names on either side: {FUSION_HELP} (#N: A's)"
    )
    g.add_argument(
        "--min-gap",
        type=number(float, 0),
        metavar="US",
        help="only fusions whose medians differ by at least US microseconds",
    )
