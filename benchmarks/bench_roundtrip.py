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

``--compare-prestart`` first runs the one-GPU round trip with every replay process started in its
turn (``--no-prestart``), then the usual halves (each worker starting its next process while one
runs), and prints both one-GPU wall times and, per distinct fusion, the replayed median both ways:
whether starting processes ahead changes what a replay measures.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

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
    args = parser.parse_args()
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
