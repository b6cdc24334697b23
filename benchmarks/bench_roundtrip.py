"""Benchmark (GPU): the round trip of a whole training step on one GPU and on two, side by side.

Targets (issue #13): a step of at least 500 fusion records round-trips in under 10 minutes on one
H200, in at most 0.6x that time on two, with the same verdicts. Give it a live capture of such a
step (``fusiondiff capture train_step.py -o live.json``); it runs ``fusiondiff.roundtrip`` twice
into fresh directories, first on GPU ``--gpus``'s first entry alone, then on the first two, and
prints both wall times, their ratio, the ratio to the targets and whether every fusion got the
same verdict. Not run on the CPU machine: see RESULTS.md.

    python3 benchmarks/bench_roundtrip.py live.json --workdir /tmp/rt-bench [--gpus 0,1] [--batch N]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fusiondiff.roundtrip import RoundTripResult, roundtrip  # noqa: E402

TARGET_ONE_S = 600.0
TARGET_TWO_RATIO = 0.6


def run(live: str, directory: Path, devices: list[str], batch: int) -> tuple[float, RoundTripResult]:
    shutil.rmtree(directory, ignore_errors=True)  # no resume: every fusion is replayed
    start = time.perf_counter()
    result = roundtrip(live, directory, devices=devices, batch=batch, progress=lambda m: print(m, file=sys.stderr))
    return time.perf_counter() - start, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("live")
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--gpus", default="0,1", help="two GPU ids (default 0,1)")
    parser.add_argument("--batch", type=int, default=1)
    args = parser.parse_args()
    gpus = [g.strip() for g in args.gpus.split(",") if g.strip()]
    if len(gpus) < 2:
        parser.error("--gpus needs two GPU ids")
    work = Path(args.workdir)
    one_s, one = run(args.live, work / "one", gpus[:1], args.batch)
    two_s, two = run(args.live, work / "two", gpus[:2], args.batch)
    verdicts_one = {r.index: r.verdict for r in one.rows}
    verdicts_two = {r.index: r.verdict for r in two.rows}
    differ = sorted(i for i in verdicts_one if verdicts_one[i] != verdicts_two.get(i))
    print(f"round trip of {args.live}: {len(one.rows)} records, {len(one.distinct)} distinct, {one.isolation}")
    print(f"  one GPU : {one_s:8.1f} s  ({one_s / TARGET_ONE_S:.2f}x of the {TARGET_ONE_S:.0f} s target)")
    print(f"  two GPUs: {two_s:8.1f} s  ({two_s / one_s:.2f}x of one GPU; target <= {TARGET_TWO_RATIO})")
    print(f"  same verdicts: {'yes' if not differ else 'no, records ' + ', '.join(f'#{i}' for i in differ)}")
    return 0 if not differ else 1


if __name__ == "__main__":
    raise SystemExit(main())
