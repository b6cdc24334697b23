"""Benchmark: the 10,000-kernel diff of ``bench_diff.py`` with two checkouts of fusiondiff, side by side.

Runs ``bench_diff.best_of(3, ...)`` in a fresh process per checkout, alternating A B A B ... for
``--rounds`` rounds, and prints each checkout's median and the ratio B/A of the medians (below 1.10:
no more than 10 % slower). For a change to the differ, A is the checkout before it:

    git worktree add /tmp/before HEAD~5
    python3 benchmarks/bench_diff_vs.py /tmp/before .
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROUND = (
    "import sys; sys.path.insert(0, {bench!r}); import bench_diff; "
    "a, b = bench_diff.build_captures(); print(bench_diff.best_of(3, a, b))"
)


def one(checkout: Path) -> float:
    """The best of three wall times of the diff, in a fresh process importing ``checkout``'s fusiondiff."""
    env = {**os.environ, "PYTHONPATH": str(checkout.resolve())}
    out = subprocess.run(
        [sys.executable, "-c", ROUND.format(bench=str(HERE))],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=checkout,
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", type=Path, help="the reference checkout (before)")
    parser.add_argument("b", type=Path, help="the checkout measured against it (after)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    times: dict[str, list[float]] = {"A": [], "B": []}
    for _ in range(args.rounds):
        times["A"].append(one(args.a))
        times["B"].append(one(args.b))
    a, b = statistics.median(times["A"]), statistics.median(times["B"])
    for side, path in (("A", args.a), ("B", args.b)):
        print(
            f"{side} {path}: "
            + ", ".join(f"{t:.3f}" for t in times[side])
            + f" s (median {statistics.median(times[side]):.3f} s)"
        )
    print(f"B/A {b / a:.3f} (median over {args.rounds} alternating rounds; within 10 %: {b / a <= 1.10})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
