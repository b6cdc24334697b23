"""Benchmark: how long the first answer takes, as ratios to ``python -c pass`` in the same run.

Each command runs in a fresh process, as a user starts it, from a neutral folder, importing
fusiondiff from the checkout measured:

- ``python -c pass``: the interpreter alone, the unit of every ratio;
- ``import``: the modules ``fusiondiff diff`` imports before it answers (the command line, the
  store, the differ, the text report);
- ``diff``: ``fusiondiff diff`` of the one-fusion pair recorded on the H200 (``tests/data/offset``),
  whose verdicts run no rank test;
- ``diff, U test``: ``fusiondiff diff`` of a one-fusion pair whose host question runs the
  Mann-Whitney test (``tests/data/zoo/control``: what most one-fusion diffs do);
- ``demo``: ``fusiondiff demo`` (without a GPU: the diff of the bundled captures).

The rounds alternate the commands and the checkouts (this one, then ``--base``), so a machine that
other work shares weighs on all of them alike; each figure is the median wall time over the rounds,
with the fastest beside it.

    python3 benchmarks/bench_startup.py [--base OTHER_CHECKOUT] [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OFFSET = ROOT / "tests" / "data" / "offset"
CONTROL = ROOT / "tests" / "data" / "zoo" / "control"
IMPORTS = (
    "import fusiondiff.front.cli, fusiondiff.io.store, fusiondiff.diff.core, fusiondiff.report.terminal, "
    "fusiondiff.report.formats.diff_text"
)
COMMANDS: dict[str, list[str]] = {
    "python -c pass": ["-c", "pass"],
    "import": ["-c", IMPORTS],
    "diff, one fusion": ["-m", "fusiondiff", "diff", str(OFFSET / "live.json"), str(OFFSET / "replay_nvfuser.json")],
    "diff, U test": ["-m", "fusiondiff", "diff", str(CONTROL / "live.json"), str(CONTROL / "replay.json")],
    "demo": ["-m", "fusiondiff", "demo"],
}
TARGETS_S = {"diff, one fusion": 0.5, "diff, U test": 0.5, "demo": 1.5}
"""The issue's targets on a quiet machine, in seconds of wall time."""


def wall(root: Path | None, args: list[str]) -> float:
    """Seconds of wall time of ``python ARGS``, fusiondiff imported from ``root``."""
    env = {**os.environ, "PYTHONPATH": str(root)} if root is not None else dict(os.environ)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *args], cwd=tempfile.gettempdir(), env=env, capture_output=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"bench_startup: {args} from {root} exited {done.returncode}: {done.stderr[-400:]!r}")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", metavar="DIR", help="another checkout measured beside this one (the code before)")
    parser.add_argument("--rounds", type=int, default=7, help="rounds of every command (default 7)")
    args = parser.parse_args()
    roots = [("this", ROOT)] + ([("base", Path(args.base).resolve())] if args.base else [])
    times: dict[tuple[str, str], list[float]] = {}
    for _name, root in roots:  # once each before timing: bytecode written, files in the page cache
        for argv in COMMANDS.values():
            wall(root, argv)
    for _ in range(args.rounds):
        for command, argv in COMMANDS.items():
            for name, root in roots:
                times.setdefault((name, command), []).append(wall(root, argv))
    print(f"bench_startup on {os.cpu_count()} CPU(s), Python {sys.version.split()[0]}, {args.rounds} rounds")
    print(f"  {'command':<18} {'checkout':<8} {'median':>8} {'fastest':>8} {'x pass':>7}  target")
    for command in COMMANDS:
        for name, _ in roots:
            runs = times[name, command]
            unit = statistics.median(times[name, "python -c pass"])
            median = statistics.median(runs)
            target = TARGETS_S.get(command)
            met = "" if target is None else f"<= {target:g} s: {'yes' if median <= target else 'no'}"
            print(f"  {command:<18} {name:<8} {median:7.3f}s {min(runs):7.3f}s {median / unit:6.1f}x  {met}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
