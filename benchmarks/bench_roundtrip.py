"""Benchmark (GPU): the round trip of a whole training step on one GPU and on two, side by side.

Targets (issue #13): a step of at least 500 fusion records round-trips in under 10 minutes on one
H200, in at most 0.6x that time on two, with the same verdicts. Give it a live capture of such a
step (``fusiondiff capture train_step.py -o live.json``); it runs ``fusiondiff.roundtrip`` twice
into fresh directories, first on GPU ``--gpus``'s first entry alone, then on the first two, and
prints both wall times, their ratio, the ratio to the targets and whether every fusion got the
same verdict. Not run on the CPU machine: see RESULTS.md.

    python3 benchmarks/bench_roundtrip.py live.json --workdir /tmp/rt-bench [--gpus 0,1] [--batch N]

With ``--half one`` and then ``--half two`` the two halves run as two commands (each may be its own
device command); the second compares its verdicts with the first's saved ``one/bench.json``.

``--modes`` (issue #28) instead runs, in one command on one GPU, the round trip of the capture in
each of several modes, one after the other, each into its own fresh directory and each stopped at
``--limit-s`` (what finished is kept and counted):

- ``reference``: a fresh process per fusion, each started in its turn (``--no-prestart``);
- ``ahead``: one fresh process started ahead, gated at its imports
  (``--ahead 1 --prepare-ahead imports --processes fresh``; the default before #28's third round);
- ``pipeline``: ``--ahead K`` processes started ahead, prepared on the GPU between
  other replays' samples (``--prepare-ahead gpu``: context, profiler, scripts run and compiled);
- ``context``: ``--context-ahead K`` processes started ahead, each with its CUDA context made and
  the profiler opened between other replays' samples, its scripts run in its own turn
  (``--prepare-ahead context``);
- ``forked``: the context mode with ``--processes forked`` and ``FORKED_AHEAD`` spares: each forked
  from one server that imported torch and nvFuser once;
- ``forked_turn``: the default, ``--processes forked`` with one process started ahead and gated at
  its imports (``--prepare-ahead imports``): no other process holds a CUDA context on the GPU; each
  makes its context, compiles and samples in its own turn, as the reference's processes do;
- ``forked_handover``: ``forked_turn`` with ``--prepare-ahead handover``: the process started
  ahead begins its turn (CUDA context, compile) as the one before it has taken its samples, while
  that one writes and exits, and samples once it has exited;
- ``floor``: every distinct fusion in one long-lived process (``--batch`` of them all): what the
  compiles and samples cost without a process per fusion;

A mode may be run twice in one command as ``MODE:2`` (into ``WORKDIR/MODE_2``): two runs of
``reference`` show how far verdicts and medians move between runs that isolate alike. With modes
run more than once, it also prints each one's median over its runs and the fusions every run of a
mode replayed above, or below, every run of the reference (``roundtrip_repeats.py``).

It prints per mode the median and worst cost per distinct fusion (on one GPU, the time from the end
of the replay before to the end of this one; in the floor's one process, a fusion's script run with
its compile plus its share of the samples, from the process's phases), the ratios to the floor, the
wall time, the median of each phase over the mode's processes, whether every record's verdict is
the reference's, and how each distinct fusion's samples sit against the reference's (the range of
the medians' ratios, and the fusions a Mann-Whitney U test finds shifted); ``--json`` gets all of it.

    python3 benchmarks/bench_roundtrip.py live.json --workdir /tmp/rt-modes --modes floor,pipeline,ahead,reference \
        --gpus 0 --limit-s 150 --json /tmp/rt-modes/modes.json

``--compare-prestart`` first runs the one-GPU round trip with every replay process started in its
turn (``--no-prestart``), then the usual halves (each worker starting its next process while one
runs), and prints both one-GPU wall times and, per distinct fusion, the replayed median both ways:
whether starting processes ahead changes what a replay measures.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.roundtrip_repeats import repeat_lines, repeat_summary  # noqa: E402
from fusiondiff.replay.stages import CONTEXT_AHEAD, FORKED_AHEAD, PIPELINE_AHEAD  # noqa: E402
from fusiondiff.roundtrip import RoundTripResult, roundtrip  # noqa: E402

TARGET_ONE_S = 600.0
TARGET_TWO_RATIO = 0.6


def run(
    live: str, directory: Path, devices: list[str], batch: int, prestart: bool = True
) -> tuple[float, RoundTripResult]:
    shutil.rmtree(directory, ignore_errors=True)  # no resume: every fusion is replayed
    start = time.perf_counter()
    result = roundtrip(
        live, directory, devices=devices, batch=batch, prestart=prestart, progress=lambda m: print(m, file=sys.stderr)
    )
    return time.perf_counter() - start, result


def save_half(directory: Path, wall_s: float, result: RoundTripResult) -> None:
    """One half's figures, for a later ``--half two`` run (each half may be its own device command)."""
    figures = {
        "wall_s": wall_s,
        "records": len(result.rows),
        "distinct": len(result.distinct),
        "isolation": result.isolation,
        "verdicts": {str(r.index): r.verdict for r in result.rows},
        "process_s": [[p.device, p.scripts, p.seconds] for p in result.processes],
        "started_ahead": result.started_ahead,
        "replay_median_ns": {str(r.index): r.replay_median_ns for r in result.rows if r.index == r.replayed_as},
    }
    (directory / "bench.json").write_text(json.dumps(figures, indent=1))


def process_words(seconds: list[float]) -> str:
    """The replay processes' wall times: isolation's cost, and where a slower half lost its time."""
    if not seconds:
        return "no replay process timed"
    ordered = sorted(seconds)
    return f"{len(ordered)} replay processes, median {statistics.median(ordered):.1f} s (fastest {ordered[0]:.1f}, slowest {ordered[-1]:.1f})"


def print_prestart_comparison(work: Path) -> None:
    """Per distinct fusion, the replayed median with every process started in its turn against
    started ahead (same GPU, one run after the other)."""
    cold, ahead = load_half(work / "one_in_turn"), load_half(work / "one")
    print(f"  started ahead: {ahead['wall_s'] / cold['wall_s']:.2f}x of the wall time started in turn")
    print("  replayed median per distinct fusion (us): in turn, ahead, ahead/in turn")
    ratios = []
    for index, median in cold["replay_median_ns"].items():
        other = ahead["replay_median_ns"].get(index)
        if other is None or not median:
            continue
        ratios.append(other / median)
        print(f"    #{index:>5}  {median / 1000:9.2f}  {other / 1000:9.2f}  {other / median:6.3f}")
    if ratios:
        print(f"  ahead/in turn: median {statistics.median(ratios):.3f}, range {min(ratios):.3f}-{max(ratios):.3f}")
    same = cold["verdicts"] == ahead["verdicts"]
    print(f"  same verdicts in turn and ahead: {'yes' if same else 'no'}")


def load_half(directory: Path) -> dict[str, Any]:
    path = directory / "bench.json"
    if not path.is_file():
        raise SystemExit(f"bench_roundtrip: {path} is missing: run --half one first")
    figures: dict[str, Any] = json.loads(path.read_text())
    return figures


MODES = ("reference", "ahead", "pipeline", "context", "forked", "forked_turn", "forked_handover", "floor")
"""The ways ``--modes`` can run the round trip (see the module docstring)."""

SHIFT_ALPHA = 0.005
"""A distinct fusion's replay counts as shifted against the reference's when a two-sided Mann-Whitney
U test of their samples gives a p-value under this."""


def base_mode(name: str) -> str:
    """The mode a run of ``--modes`` is: ``reference:2`` is a second run of ``reference`` (into
    ``WORKDIR/reference_2``), so two runs of one mode show how far their verdicts and medians move
    between runs."""
    return name.split(":", 1)[0]


def mode_arguments(mode: str, distinct: int, ahead: int, context_ahead: int = CONTEXT_AHEAD) -> dict[str, Any]:
    """The :func:`roundtrip` arguments of one mode."""
    if mode == "reference":
        return {"prestart": False, "forked": False}
    if mode == "ahead":
        return {"prestart": True, "ahead": 1, "prepare": "imports", "forked": False}
    if mode == "pipeline":
        return {"prestart": True, "ahead": ahead, "prepare": "gpu", "forked": False}
    if mode == "context":
        return {"prestart": True, "ahead": context_ahead, "prepare": "context", "forked": False}
    if mode == "forked":
        return {"prestart": True, "ahead": FORKED_AHEAD, "prepare": "context", "forked": True}
    if mode == "forked_turn":
        return {"prestart": True, "ahead": 1, "prepare": "imports", "forked": True}
    if mode == "forked_handover":
        return {"prestart": True, "ahead": 1, "prepare": "handover", "forked": True}
    if mode == "floor":
        return {"prestart": False, "batch": max(distinct, 1), "forked": False}
    raise ValueError(f"unknown mode {mode!r}: one of {', '.join(MODES)}")


def mode_limits(text: str, modes: list[str], default_s: float = 150.0) -> dict[str, float]:
    """``--limit-s``: one number for every mode, or ``MODE=S`` pairs (a repeat such as
    ``reference:2`` not named gets its mode's; a mode not named gets ``default_s``)."""
    if "=" not in text:
        return {m: float(text) for m in modes}
    named: dict[str, float] = {}
    for pair in text.split(","):
        mode, _, seconds = pair.partition("=")
        if base_mode(mode.strip()) not in MODES:
            raise SystemExit(f"bench_roundtrip: --limit-s names an unknown mode {mode.strip()!r}")
        named[mode.strip()] = float(seconds)
    return {m: named.get(m, named.get(base_mode(m), default_s)) for m in modes}


def process_costs(processes: list[dict[str, Any]]) -> list[float]:
    """Each distinct fusion's share of a mode's wall time: per GPU, the processes in the order they
    ended, each costing the time since the one before it ended (the first, since the replays began),
    split evenly among the scripts it ran. ``processes``: ``{"device", "scripts", "ended_s"}``."""
    costs: list[float] = []
    by_device: dict[Any, list[dict[str, Any]]] = {}
    for p in processes:
        if p.get("ended_s") is not None:
            by_device.setdefault(p.get("device"), []).append(p)
    for ended in by_device.values():
        previous = 0.0
        for p in sorted(ended, key=lambda p: float(p["ended_s"])):
            share = (float(p["ended_s"]) - previous) / max(int(p["scripts"]), 1)
            costs += [share] * max(int(p["scripts"]), 1)
            previous = float(p["ended_s"])
    return costs


def floor_costs(phases: list[dict[str, Any]]) -> list[float]:
    """Each fusion's cost inside a long-lived process, from its phases
    (:mod:`fusiondiff.replay.phases`): its script's run (nvFuser compiles at the first execute)
    plus its share of the samples: the time from the samples' start, or the fusion timed before
    it, to its own timing line (``fusiondiff: NAME: N kernel(s), ...``)."""
    costs: list[float] = []
    for doc in phases:
        runs = [p["end"] - p["start"] for p in doc.get("phases", []) if p["name"] == "scripts"]
        samples = [p for p in doc.get("phases", []) if p["name"] == "samples"]
        shares: list[float] = []
        if samples:
            start, end = samples[0]["start"], samples[0]["end"]
            previous = start
            for e in doc.get("events", []):
                if start <= e["at"] <= end and " kernel(s), " in e["name"]:
                    shares.append(e["at"] - previous)
                    previous = e["at"]
        for i, run in enumerate(runs):
            costs.append(run + (shares[i] if i < len(shares) else 0.0))
    return costs


def spread(costs: list[float]) -> dict[str, float | int | None]:
    """Median and worst of a list of costs (``None`` for an empty one), and the same of the costs
    after the first: the first fusion on a GPU also pays for filling the pipeline (its process's
    imports and preparation, with nothing before it to hide them), once per GPU and run; in a
    session of a few fusions that one cost also moves the median by a rank."""
    rest = costs[1:]
    return {
        "count": len(costs),
        "median_s": statistics.median(costs) if costs else None,
        "worst_s": max(costs, default=None),
        "first_s": costs[0] if costs else None,
        "median_after_first_s": statistics.median(rest) if rest else None,
        "worst_after_first_s": max(rest, default=None),
    }


def ratios_to(figures: dict[str, Any], floor: dict[str, Any] | None) -> dict[str, float | None]:
    """A mode's median and worst cost per fusion and its wall time over the floor's."""

    def ratio(key: str) -> float | None:
        a, b = figures.get(key), (floor or {}).get(key)
        return a / b if a is not None and b else None

    return {"median": ratio("median_s"), "worst": ratio("worst_s"), "wall": ratio("wall_s")}


def verdict_differences(reference: dict[str, str], other: dict[str, str]) -> dict[str, Any]:
    """Records whose verdict differs from the reference's, among those both replayed; and how
    many were compared (a mode stopped at its limit compares fewer)."""
    common = sorted(set(reference) & set(other), key=int)
    differ = [i for i in common if reference[i] != other[i]]
    return {"compared": len(common), "differ": differ, "same": not differ and bool(common)}


def verdict_margins(
    differ: list[str], live_ns: dict[str, float], reference_ns: dict[str, float], mode_ns: dict[str, float]
) -> dict[str, dict[str, float]]:
    """Where each differing record's two replays sat against its live median: both gaps as fractions
    of the live median (negative: faster), beside the noise floor the verdicts use. A record whose
    gaps straddle the floor by a fraction of a percent was decided by run-to-run noise; one whose
    gaps lie far apart was moved by the mode. Records without a median on either side are left out."""
    from fusiondiff.diff.stats import ABSOLUTE_FLOOR_NS, RELATIVE_FLOOR

    margins: dict[str, dict[str, float]] = {}
    for key in differ:
        live, theirs, mine = live_ns.get(key), reference_ns.get(key), mode_ns.get(key)
        if not live or theirs is None or mine is None:
            continue
        margins[key] = {
            "floor": max(RELATIVE_FLOOR * live, ABSOLUTE_FLOOR_NS) / live,
            "reference_gap": theirs / live - 1,
            "gap": mine / live - 1,
        }
    return margins


def margin_words(margins: dict[str, dict[str, float]]) -> str:
    """``record 9: -2.04 % of live in the reference, -1.90 % here (floor 2.00 %)``, one per record."""
    return "; ".join(
        f"record {key}: {100 * m['reference_gap']:+.2f} % of live in the reference, {100 * m['gap']:+.2f} % here "
        f"(floor {100 * m['floor']:.2f} %)"
        for key, m in margins.items()
    )


def live_medians(live: str) -> dict[str, float]:
    """The live capture's median per record (its fusions' order), as the verdicts are keyed."""
    from fusiondiff.io.store import load_capture

    return {str(i): f.timing.median_ns for i, f in enumerate(load_capture(live).fusions) if f.timing and f.timing.count}


def phase_medians(phases: list[dict[str, Any]]) -> dict[str, float]:
    """Per phase name, the median over the processes of its seconds (a process without the phase
    is left out of that phase's median)."""
    seen: dict[str, list[float]] = {}
    for doc in phases:
        for name, seconds in doc.get("seconds", {}).items():
            seen.setdefault(name, []).append(float(seconds))
    return {name: statistics.median(values) for name, values in seen.items()}


def _stop_at_limit(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt  # the round trip stops its replays, keeps what finished, says interrupted


def import_before_limits() -> None:
    """Import what a round trip's diff imports lazily (deepdiff, and pandas through it) before any
    mode's limit is armed. The limit is a SIGALRM that raises ``KeyboardInterrupt`` wherever the
    process is; on the H200 (seventh round, phi-2) it fell 2 s after the default's replays had all
    finished, in its diff's first import of pandas (compiled into a fresh bytecode cache), which
    lost that mode's figures and left pandas half initialized: the next mode's diff then died on
    ``partially initialized module 'pandas'``."""
    import deepdiff  # noqa: F401


def run_mode(
    live: str,
    mode: str,
    work: Path,
    gpu: str,
    ahead: int,
    limit_s: float,
    distinct: int,
    context_ahead: int = CONTEXT_AHEAD,
) -> dict[str, Any]:
    """One mode's round trip into ``work/mode`` (fresh), stopped at ``limit_s``; its figures."""
    import signal

    directory = work / mode.replace(":", "_")
    shutil.rmtree(directory, ignore_errors=True)
    arguments = mode_arguments(base_mode(mode), distinct, ahead, context_ahead)
    previous = signal.signal(signal.SIGALRM, _stop_at_limit)
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    start = time.perf_counter()
    result: RoundTripResult | None = None
    try:
        result = roundtrip(
            live,
            directory,
            devices=[gpu],
            timeout_s=limit_s,
            progress=lambda m: print(f"[{mode}] {m}", file=sys.stderr),
            **arguments,
        )
    except KeyboardInterrupt:
        pass  # the limit came outside the replays (merging, diffing): no result
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    wall_s = time.perf_counter() - start
    phases = [json.loads(p.read_text()) for p in sorted((directory / "logs").glob("*.phases.json"))]
    processes = [] if result is None else [dataclasses.asdict(p) for p in result.processes]
    costs = floor_costs(phases) if base_mode(mode) == "floor" else process_costs(processes)
    figures: dict[str, Any] = {
        "mode": mode,
        "arguments": arguments,
        "wall_s": wall_s,
        "stopped_at_limit": result is None or result.interrupted,
        "limit_s": limit_s,
        "records": None if result is None else len(result.rows),
        "distinct": distinct,
        "replayed": None if result is None else result.replayed_now,
        "processes": processes,
        "costs_s": costs,
        **spread(costs),
        "wall_per_fusion_s": wall_s / distinct if distinct else None,
        "phase_medians_s": phase_medians(phases),
        "verdicts": {}
        if result is None
        else {str(r.index): r.verdict for r in result.rows if r.verdict != "NOT REPLAYED"},
        "replay_median_ns": {}
        if result is None
        else {str(r.index): r.replay_median_ns for r in result.rows if r.index == r.replayed_as},
        "replay_samples_ns": {}
        if result is None or result.replay_path is None
        else replay_samples(result.replay_path, {d.stem: d.index for d in result.distinct}),
    }
    (directory / "bench_mode.json").write_text(json.dumps(figures, indent=1, default=str))
    return figures


def replay_samples(replay_path: Path, stems: dict[str, int]) -> dict[str, list[float]]:
    """Each distinct fusion's samples (ns) in a mode's merged replay (``DIR/replay.json``, whose
    fusions are named ``<stem>:<name>``), keyed as the verdicts are: by the record it was replayed
    for (``stems``: each replay's stem to that record)."""
    from fusiondiff.io.store import load_capture

    samples: dict[str, list[float]] = {}
    for fusion in load_capture(replay_path).fusions:
        index = stems.get(fusion.name.partition(":")[0])
        if index is not None and fusion.timing is not None and str(index) not in samples:
            samples[str(index)] = [float(x) for x in fusion.timing.samples_ns]
    return samples


def sample_shifts(
    samples: dict[str, list[float]], reference: dict[str, list[float]], alpha: float = SHIFT_ALPHA
) -> dict[str, Any]:
    """How each distinct fusion's replayed samples sit against the reference run's: the ratio of
    their medians and a two-sided Mann-Whitney U test's p-value; the range of the ratios, and the
    fusions shifted (p under ``alpha``): what two runs in fresh processes differ by, beyond each
    run's own spread of samples."""
    from scipy.stats import mannwhitneyu

    rows: dict[str, dict[str, float]] = {}
    for key in sorted(set(samples) & set(reference), key=int):
        mine, theirs = samples[key], reference[key]
        if len(mine) < 2 or len(theirs) < 2:
            continue
        rows[key] = {
            "ratio": statistics.median(mine) / statistics.median(theirs),
            "p": float(mannwhitneyu(mine, theirs, alternative="two-sided").pvalue),
        }
    ratios = [r["ratio"] for r in rows.values()]
    return {
        "compared": len(rows),
        "min_ratio": min(ratios) if ratios else None,
        "max_ratio": max(ratios) if ratios else None,
        "shifted": [key for key, r in rows.items() if r["p"] < alpha],
        "rows": rows,
    }


def compare_modes(
    figures: dict[str, dict[str, Any]], reference: dict[str, Any] | None, live_ns: dict[str, float] | None = None
) -> dict[str, dict[str, Any]]:
    """Per mode, its ratios to the floor, its verdicts against the reference's (with ``live_ns``, the
    live medians, also where the differing records sat: :func:`verdict_margins`) and its samples'
    shifts against the reference's (where both kept their samples)."""
    floor = figures.get("floor")
    compared: dict[str, dict[str, Any]] = {}
    for mode, f in figures.items():
        verdicts = (
            None if reference is None else verdict_differences(reference.get("verdicts", {}), f.get("verdicts", {}))
        )
        if verdicts is not None and live_ns is not None:
            verdicts["margins"] = verdict_margins(
                verdicts["differ"], live_ns, reference.get("replay_median_ns", {}), f.get("replay_median_ns", {})
            )
        compared[mode] = {
            "ratios_to_floor": ratios_to(f, floor) if base_mode(mode) != "floor" else None,
            "verdicts_vs_reference": verdicts,
            "shifts_vs_reference": None
            if reference is None or not reference.get("replay_samples_ns") or not f.get("replay_samples_ns")
            else sample_shifts(f["replay_samples_ns"], reference["replay_samples_ns"]),
        }
    return compared


def shift_words(shifts: dict[str, Any] | None) -> str:
    """``medians -1.4 % to +1.8 % of the reference's; shifted (p < 0.005): 2 of 12 fusions (records
    3, 14)``: each shifted fusion named by its live record."""
    if shifts is None or not shifts["compared"]:
        return ""
    low, high = (100 * (shifts[k] - 1) for k in ("min_ratio", "max_ratio"))
    shifted = shifts["shifted"]
    which = f"{len(shifted)} of {shifts['compared']} fusions" if shifted else f"none of {shifts['compared']} fusions"
    named = f" (record{'s' if len(shifted) > 1 else ''} {', '.join(shifted)})" if shifted else ""
    return f"medians {low:+.1f} % to {high:+.1f} % of the reference's; shifted (p < {SHIFT_ALPHA}): {which}{named}"


def _seconds(value: float | None) -> str:
    return "   -  " if value is None else f"{value:6.2f}"


def _ratio(value: float | None) -> str:
    return "  -  " if value is None else f"{value:5.2f}x"


def print_modes(live: str, figures: dict[str, dict[str, Any]], compared: dict[str, dict[str, Any]]) -> None:
    print(
        f"round trip of {live}, mode by mode on one GPU (cost per distinct fusion, seconds; 'w/o 1st': "
        "the median and the worst of all but the first, which also fills the pipeline)"
    )
    width = max([10, *map(len, figures)])  # the mode names ("forked_handover:2") set the first column
    print(
        f"  {'mode':<{width}} {'median':>7} {'worst':>7} {'w/o 1st':>15} {'wall':>8} {'wall/fus.':>9}  "
        f"{'x floor (median, worst, wall)':<30} verdicts"
    )
    for mode, f in figures.items():
        c = compared[mode]
        r = c["ratios_to_floor"] or {}
        v = c["verdicts_vs_reference"]
        words = (
            "-" if v is None else ("same" if v["same"] else f"differ: {v['differ']}") + f" ({v['compared']} compared)"
        )
        stopped = "  STOPPED AT LIMIT" if f["stopped_at_limit"] else ""
        print(
            f"  {mode:<{width}} {_seconds(f['median_s'])}  {_seconds(f['worst_s'])}  "
            f"{_seconds(f.get('median_after_first_s'))} {_seconds(f.get('worst_after_first_s'))}  {f['wall_s']:7.1f}  "
            f"{_seconds(f['wall_per_fusion_s'])}    {_ratio(r.get('median'))} {_ratio(r.get('worst'))} "
            f"{_ratio(r.get('wall'))}          {words}{stopped}"
        )
        phases = ", ".join(f"{k} {v:.2f}" for k, v in f["phase_medians_s"].items())
        print(f"  {'':<{width}} phases (median s per process): {phases or 'none written'}")
        shifts = shift_words(c.get("shifts_vs_reference"))
        if mode != "reference" and shifts:
            print(f"  {'':<{width}} {shifts}")
        if v is not None and v.get("margins"):
            print(f"  {'':<{width}} {margin_words(v['margins'])}")


def main_modes(args: argparse.Namespace) -> int:
    from fusiondiff.io.store import load_capture
    from fusiondiff.roundtrip import distinct_fusions

    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if base_mode(m) not in MODES]
    if unknown:
        raise SystemExit(f"bench_roundtrip: unknown mode(s) {unknown}: use {', '.join(MODES)}")
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    distinct = len(distinct_fusions(load_capture(args.live)))
    gpu = [g.strip() for g in args.gpus.split(",") if g.strip()][0]
    limits = mode_limits(args.limit_s, modes)
    import_before_limits()
    figures = {m: run_mode(args.live, m, work, gpu, args.ahead, limits[m], distinct, args.context_ahead) for m in modes}
    if "floor" not in figures and (work / "floor" / "bench_mode.json").is_file():
        figures["floor"] = json.loads((work / "floor" / "bench_mode.json").read_text())  # an earlier command's
    reference = figures.get("reference")
    if reference is None and (work / "reference" / "bench_mode.json").is_file():
        reference = json.loads((work / "reference" / "bench_mode.json").read_text())
    compared = compare_modes(figures, reference, live_medians(args.live))
    print_modes(args.live, figures, compared)
    repeats = repeat_summary(figures)
    for line in repeat_lines(repeats):
        print(f"  {line}")
    everything = {
        "live": args.live,
        "gpu": gpu,
        "ahead": args.ahead,
        "modes": figures,
        "compared": compared,
        "repeats": repeats,
    }
    Path(args.json or work / "modes.json").write_text(json.dumps(everything, indent=1, default=str))
    differ = any(c["verdicts_vs_reference"] and c["verdicts_vs_reference"]["differ"] for c in compared.values())
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("live")
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--gpus", default="0,1", help="two GPU ids (default 0,1)")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument(
        "--compare-prestart",
        action="store_true",
        help="first a one-GPU run with every process started in its turn, compared with the usual one",
    )
    parser.add_argument(
        "--half",
        choices=("one", "two", "both"),
        default="both",
        help="run only the one-GPU round trip, only the two-GPU one (then compare with the saved "
        "one-GPU figures), or both (default)",
    )
    parser.add_argument(
        "--modes",
        help=f"comma-separated, of {', '.join(MODES)}: run the round trip in each mode on the first of --gpus "
        "and compare the cost per distinct fusion (issue #28); the halves are not run",
    )
    parser.add_argument("--ahead", type=int, default=PIPELINE_AHEAD, help="K of the pipeline mode (--ahead)")
    parser.add_argument("--context-ahead", type=int, default=CONTEXT_AHEAD, help="K of the context mode (--ahead)")
    parser.add_argument(
        "--limit-s",
        default="150",
        help="each mode is stopped after this many seconds (default 150); or per mode, as "
        "floor=60,pipeline=90,ahead=120,reference=170 (a mode not named gets 150)",
    )
    parser.add_argument("--json", help="where --modes writes its figures (default WORKDIR/modes.json)")
    args = parser.parse_args()
    if args.modes:
        return main_modes(args)
    gpus = [g.strip() for g in args.gpus.split(",") if g.strip()]
    if len(gpus) < 2:
        parser.error("--gpus needs two GPU ids")
    work = Path(args.workdir)
    if args.compare_prestart:
        cold_s, cold = run(args.live, work / "one_in_turn", gpus[:1], args.batch, prestart=False)
        save_half(work / "one_in_turn", cold_s, cold)
        print(f"  one GPU, each process started in its turn: {cold_s:8.1f} s")
        print(f"            {process_words([p.seconds for p in cold.processes])}")
    if args.half in ("one", "both"):
        one_s, one = run(args.live, work / "one", gpus[:1], args.batch)
        save_half(work / "one", one_s, one)
        print(f"round trip of {args.live}: {len(one.rows)} records, {len(one.distinct)} distinct, {one.isolation}")
        print(f"  one GPU : {one_s:8.1f} s  ({one_s / TARGET_ONE_S:.2f}x of the {TARGET_ONE_S:.0f} s target)")
        print(f"            {process_words([p.seconds for p in one.processes])}")
        if args.compare_prestart:
            print_prestart_comparison(work)
        if args.half == "one":
            return 0
    first = load_half(work / "one")
    two_s, two = run(args.live, work / "two", gpus[:2], args.batch)
    save_half(work / "two", two_s, two)
    verdicts_one: dict[str, str] = first["verdicts"]
    verdicts_two = {str(r.index): r.verdict for r in two.rows}
    differ = sorted(int(i) for i in verdicts_one if verdicts_one[i] != verdicts_two.get(i))
    one_s = float(first["wall_s"])
    print(f"round trip of {args.live}: {len(two.rows)} records, {len(two.distinct)} distinct, {two.isolation}")
    print(f"  one GPU : {one_s:8.1f} s  ({one_s / TARGET_ONE_S:.2f}x of the {TARGET_ONE_S:.0f} s target)")
    print(f"            {process_words([row[2] for row in first.get('process_s', [])])}")
    print(f"  two GPUs: {two_s:8.1f} s  ({two_s / one_s:.2f}x of one GPU; target <= {TARGET_TWO_RATIO})")
    print(f"            {process_words([p.seconds for p in two.processes])}")
    counts = {v: list(verdicts_two.values()).count(v) for v in sorted(set(verdicts_two.values()))}
    print(f"  verdicts (two GPUs): {', '.join(f'{v} {n}' for v, n in counts.items())}")
    print(f"  same verdicts: {'yes' if not differ else 'no, records ' + ', '.join(f'#{i}' for i in differ)}")
    return 0 if not differ else 1


if __name__ == "__main__":
    raise SystemExit(main())
