"""Calibrate the between-process spread of a fusion's kernel time from the repository's recordings.

A verdict of one process against one (:mod:`fusiondiff.diff.noise`) is judged against how far the
median of one fusion moves between fresh processes of one program: memory placement, alignment,
clocks and the allocator change with the process, not with the samples inside it. This script
measures that spread from every recording of one fusion in several processes:

- the round trip's replays (``tests/data/roundtrip_modes``): each distinct fusion of a step
  replayed in its own fresh process once per mode and round (``replay_samples_ns`` of each
  ``bench_mode.json``, ``samples.json``), 3 to 25 processes per fusion;
- on the H100, one pythia-160m training step captured live in 5 processes and replayed in 5 more
  (``tests/data/h100/noise``): each fusion's live records (``<trace>_<name>``) and the replays of
  its script (``<trace>_<name>:fusion0``), 5 to 10 processes per fusion; live and replay pooled,
  so what a live-against-replay diff faces is in the spread.

Per fusion, the spread is the standard deviation of the natural log of its process medians
(a fraction of the median). Per GPU kind and duration bucket the table keeps the largest of its
fusions' spreads: a diff does not know whether its fusion is one of the noisier ones, and the
spread differs between fusions of one size by up to 5x (0.26 % to 1.25 % at 10-50 us on the H200).

    python benchmarks/calibrate_spread.py [--write]

prints the table, every fusion's spread, and the largest gap between two processes of one
fusion against the floor one process against one then gets; ``--write`` stores the table in
``fusiondiff/data/process_spread.json``, where :mod:`fusiondiff.diff.noise` reads it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
TABLE = ROOT / "fusiondiff" / "data" / "process_spread.json"
MIN_PROCESSES = 3
"""A fusion's spread is estimated from at least this many processes."""
BUCKETS_NS = (0.0, 10_000.0, 50_000.0, math.inf)
"""Duration buckets, by the fusion's median: under 10 us, 10-50 us, 50 us and more."""
PROGRAMS = ("llama3", "phi2", "stablelm")
"""The round trip's recorded programs (each folder of ``roundtrip_modes`` names one)."""


def roundtrip_processes() -> dict[tuple[str, str], list[float]]:
    """Each (program, record) fusion's process medians on the H200, every process counted once."""
    seen: set[tuple[float, ...]] = set()
    medians: dict[tuple[str, str], list[float]] = defaultdict(list)
    sources = sorted(DATA.glob("roundtrip_modes/**/bench_mode.json")) + sorted(
        DATA.glob("roundtrip_modes/**/samples.json")
    )
    for path in sources:
        data = json.loads(path.read_text())
        samples = (data.get("replay_samples_ns") or {}) if path.name == "bench_mode.json" else data
        program = next((p for p in PROGRAMS if re.search(rf"(^|/){p}", str(path.relative_to(DATA)))), None)
        if program is None or not isinstance(samples, dict):
            continue
        for record, values in samples.items():
            if not isinstance(values, list) or not values or min(values) <= 0 or tuple(values) in seen:
                continue
            seen.add(tuple(values))  # a process's samples copied into two files count once
            medians[(program, record)].append(statistics.median(values))
    return medians


def noise_processes() -> dict[tuple[str, str], list[float]]:
    """Each fusion's process medians in the H100's five live captures and five replays of one step."""
    medians: dict[tuple[str, str], list[float]] = defaultdict(list)
    for path in sorted(DATA.glob("h100/noise/*.json")):
        for fusion in json.loads(path.read_text())["fusions"]:
            values = fusion["timing"]["samples_ns"]
            key = f"{fusion['trace']}_{fusion['name']}" if fusion.get("trace") else fusion["name"].split(":")[0]
            if values and min(values) > 0:
                medians[("pythia", key)].append(statistics.median(values))
    return medians


def spreads(medians: dict[tuple[str, str], list[float]]) -> list[tuple[float, float, int, str]]:
    """Per fusion with enough processes: (median ns, spread of log medians, processes, name)."""
    rows = []
    for (program, record), values in sorted(medians.items()):
        if len(values) >= MIN_PROCESSES:
            logs = [math.log(v) for v in values]
            name = f"{program} record {record}" if record.isdigit() else f"{program} {record}"
            rows.append((statistics.median(values), statistics.stdev(logs), len(values), name))
    return rows


def bucket_of(median_ns: float) -> int:
    """The index of the duration bucket a median falls in."""
    return next(i for i in range(len(BUCKETS_NS) - 1) if median_ns < BUCKETS_NS[i + 1])


def table(rows: list[tuple[float, float, int, str]], gpu: str) -> list[dict[str, object]]:
    """Per duration bucket: the largest spread of its fusions, how many fusions and processes."""
    by_bucket: dict[int, list[tuple[float, float, int, str]]] = defaultdict(list)
    for row in rows:
        by_bucket[bucket_of(row[0])].append(row)
    entries = []
    for index, inside in sorted(by_bucket.items()):
        worst = max(inside, key=lambda r: r[1])
        entries.append(
            {
                "gpu": gpu,
                "from_ns": BUCKETS_NS[index],
                "to_ns": None if math.isinf(BUCKETS_NS[index + 1]) else BUCKETS_NS[index + 1],
                "spread": round(worst[1], 5),
                "fusions": len(inside),
                "processes": sum(r[2] for r in inside),
                "largest_in": worst[3],
            }
        )
    return entries


def largest_pair_gaps(medians: dict[tuple[str, str], list[float]]) -> list[tuple[float, str]]:
    """Per fusion, the largest |ln ratio| between two of its processes."""
    gaps = []
    for (program, record), values in medians.items():
        if len(values) >= 2:
            worst = max(abs(math.log(x / y)) for x, y in itertools.combinations(values, 2))
            gaps.append((worst, f"{program} record {record} ({len(values)} processes)"))
    return sorted(gaps, reverse=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"store the table in {TABLE.relative_to(ROOT)}")
    args = parser.parse_args()
    entries = []
    for gpu, medians in (("H200", roundtrip_processes()), ("H100", noise_processes())):
        rows = spreads(medians)
        for median, spread, processes, name in sorted(rows):
            print(f"{gpu} {median / 1000:8.2f} us  spread {100 * spread:5.2f} %  {processes:3d} processes  {name}")
        entries += table(rows, gpu)
        for gap, name in largest_pair_gaps(medians)[:3]:
            print(f"{gpu} largest gap between two processes: {100 * gap:.2f} % in {name}")
    for e in entries:
        print(
            f"{e['gpu']} bucket from {e['from_ns']} ns: spread {100 * float(e['spread']):.2f} % ({e['fusions']} fusions)"
        )
    document = {
        "what": "between-process spread of a fusion's median kernel time: the standard deviation of the natural "
        "log of one fusion's medians in fresh processes of one program, the largest of the fusions of a "
        "GPU kind and duration bucket",
        "source": "benchmarks/calibrate_spread.py over tests/data/roundtrip_modes (the round trip's replays of "
        "llama3, phi-2 and stablelm steps on one H200 kind, torch 2.11, nvFuser 0.2.36, driver 580.159.04, "
        "2026-12-03 to 2026-12-06), each fusion in 11 to 25 processes, and tests/data/h100/noise (a pythia-160m "
        "training step live in 5 processes and replayed in 5 on one H100 kind, same stack, 2026-12-07), each "
        "fusion in 5 to 10 processes",
        "entries": entries,
    }
    if args.write:
        TABLE.write_text(json.dumps(document, indent=1) + "\n")
        print(f"written: {TABLE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
