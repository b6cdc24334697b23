"""Benchmark: ``fusiondiff diff`` of whole sessions, 100 to 100,000 fusions, side by side with another checkout.

Captures of N fusions are built as ``bench_load.py`` builds them (the 26 fusion records of
``tests/data/fidelity/llama3/live.json``, each copy with its own name and definition); B is the
same fusions written as a replay, every time in its timings 1 % longer (so B's samples differ from
A's, as a replay's do, and a record must hold both). Per size and per checkout, each in a fresh
process, as a user runs it:

- **load**: ``store.load_capture`` of A (the process's CPU time, best of ``--repeat``);
- **alone**: ``diff.core.diff(A, B)`` of the two captures loaded, in one process (its CPU time,
  best of ``--repeat``): the differ's own cost, the issue's "the diff <= 1 s of CPU";
- **diff**: ``python -m fusiondiff diff A B`` (CPU time of the process, user and system);
- **diff --json**: the same with ``--json FILE``: its CPU time, its peak resident memory (over the
  two input files) and the record's size (over the two captures).

At 100,000 fusions the captures are larger than a capture file may be (512 MiB): there the work
runs in one process on the decoded bytes (``_PAST_CAP``: decode, diff, record), its load the
decode of A, its diff and --json figures those of that process without and with the record.

The checkouts alternate per size (this one, then ``--base``), so a busy machine weighs on both
alike. CPU time, not wall time: other work shares this machine.

    python3 benchmarks/bench_scale.py [--base OTHER_CHECKOUT] [--sizes 100,1000,10000,100000] [--repeat 3]
        [--base-up-to 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "data" / "fidelity" / "llama3" / "live.json"
TARGETS = {"diff 10000": 1.0, "json 10000": 3.0, "memory": 4.0, "record": 1.1, "load scaling": 11.0}

_LOAD = """
import resource, sys, time
from fusiondiff.io.store import load_capture
best = float("inf")
for _ in range({repeat}):
    start = time.process_time()
    capture = load_capture(sys.argv[1])
    best = min(best, time.process_time() - start)
    del capture
print(best)
"""

_ALONE = """
import sys, time
from fusiondiff.diff.core import diff
from fusiondiff.io.store import load_capture
a, b = load_capture(sys.argv[1]), load_capture(sys.argv[2])
best = float("inf")
for _ in range({repeat}):
    start = time.process_time()
    diff(a, b)
    best = min(best, time.process_time() - start)
print(best)
"""


def build(count: int, kind: str, slower: float = 1.0) -> str:
    """A capture of ``count`` fusions made of the recorded ones (each its own name and definition),
    every timing figure times ``slower``."""
    sys.path.insert(0, str(ROOT))
    from fusiondiff.records.definition import definition_hash, tagged_structural_hash

    data = json.loads(SOURCE.read_text())
    base = [_slower(f, slower) for f in data["fusions"]]
    fusions = []
    for i in range(count):
        f = dict(base[i % len(base)])
        definition = f["definition"].rstrip("\n") + f"\n    fd.add_output(fd.define_scalar({i}, dtype=DataType.Int))\n"
        f.update(name=f"nvFusion{i}", definition=definition, definition_hash=definition_hash(definition))
        f["graph_hash"] = tagged_structural_hash(definition)
        fusions.append(f)
    data.update(fusions=fusions, kind=kind, source=f"bench_scale: {count} fusions from {SOURCE.name}")
    if count >= 100_000:  # indented, 100,000 of these records are 0.8 GB, over what a capture may be
        return json.dumps(data, separators=(",", ":")) + "\n"  # (store.MAX_CAPTURE_BYTES, 512 MiB)
    return json.dumps(data, indent=1) + "\n"  # as store.dumps_capture writes


def _slower(value: object, factor: float) -> object:
    """``value`` with every number under a key ending in ``_ns`` times ``factor``."""
    if isinstance(value, dict):
        return {
            k: (
                [x * factor for x in v]
                if k.endswith("_ns") and isinstance(v, list)
                else v * factor
                if k.endswith("_ns") and isinstance(v, float)
                else _slower(v, factor)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_slower(v, factor) for v in value]
    return value


def run(root: Path, args: list[str]) -> tuple[float, int, str]:
    """``python ARGS`` importing fusiondiff from ``root``: (CPU seconds, peak RSS bytes, stdout)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    with tempfile.TemporaryFile() as err:
        process = subprocess.Popen(
            [sys.executable, *args], cwd=tempfile.gettempdir(), env=env, stdout=subprocess.PIPE, stderr=err
        )
        assert process.stdout is not None
        out = process.stdout.read().decode()
        _, status, usage = os.wait4(process.pid, 0)
        process.stdout.close()
        err.seek(0)
        said = err.read().decode(errors="replace")
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1) or (code == 1 and args[0] == "-c"):
        raise SystemExit(f"bench_scale: {args[:3]} from {root} exited {code}: {said[-300:]}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, out


_PAST_CAP = """
import sys, time
from fusiondiff.diff.core import diff
from fusiondiff.records.codec import decode_capture_bytes
from fusiondiff.report.interface import DiffReport
from fusiondiff.report.formats.record import encode_diff_record
start = time.process_time()
a = decode_capture_bytes(open(sys.argv[1], "rb").read())
load = time.process_time() - start
b = decode_capture_bytes(open(sys.argv[2], "rb").read())
result = diff(a, b)
if sys.argv[3] != "-":
    open(sys.argv[3], "wb").write(encode_diff_record(DiffReport(result, a, b)))
print(load)
"""
"""Past the size a capture file may have (``store.MAX_CAPTURE_BYTES``): the same work in one
process, the captures decoded from their bytes as ``load_capture`` decodes them."""


def measure(root: Path, a: Path, b: Path, record: Path, repeat: int) -> dict[str, float]:
    """The figures of one checkout on one pair of captures (module docstring)."""
    if a.stat().st_size > 512 * 2**20:
        plain, _, out = run(root, ["-c", _PAST_CAP, str(a), str(b), "-"])
        cpu, rss, _ = run(root, ["-c", _PAST_CAP, str(a), str(b), str(record)])
        inputs = a.stat().st_size + b.stat().st_size
        return {
            "load": float(out),
            "alone": float("nan"),
            "diff": plain,
            "json": cpu,
            "memory": rss / inputs,
            "rss_gib": rss / 2**30,
            "record": record.stat().st_size / inputs,
            "record_mib": record.stat().st_size / 2**20,
        }
    load = float(run(root, ["-c", _LOAD.format(repeat=repeat), str(a)])[2])
    alone = float(run(root, ["-c", _ALONE.format(repeat=repeat), str(a), str(b)])[2])
    plain = min(run(root, ["-m", "fusiondiff", "diff", str(a), str(b)])[0] for _ in range(repeat))
    best = (float("inf"), 0)
    for _ in range(repeat):
        cpu, rss, _ = run(root, ["-m", "fusiondiff", "diff", str(a), str(b), "--json", str(record)])
        best = min(best, (cpu, rss))
    inputs = a.stat().st_size + b.stat().st_size
    return {
        "load": load,
        "alone": alone,
        "diff": plain,
        "json": best[0],
        "memory": best[1] / inputs,
        "rss_gib": best[1] / 2**30,
        "record": record.stat().st_size / inputs,
        "record_mib": record.stat().st_size / 2**20,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", metavar="DIR", help="another checkout measured beside this one (the code before)")
    parser.add_argument("--sizes", default="100,1000,10000", help="fusions per capture, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs below 100,000 fusions")
    parser.add_argument(
        "--base-up-to",
        type=int,
        default=10_000,
        metavar="N",
        help="measure --base up to N fusions only (default 10,000: its record of 100,000 needs about 18 GB)",
    )
    args = parser.parse_args()
    roots = [("this", ROOT)] + ([("base", Path(args.base).resolve())] if args.base else [])
    sizes = [int(s) for s in args.sizes.split(",")]
    print(
        f"bench_scale on {os.cpu_count()} CPU(s), Python {sys.version.split()[0]}; CPU seconds, best of {args.repeat}"
    )
    print(
        f"  {'fusions':>8} {'checkout':<8} {'load':>7} {'alone':>7} {'diff':>7} {'--json':>7} {'peak mem':>9} "
        f"{'record':>8}"
    )
    figures: dict[tuple[str, int], dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="fusiondiff-scale-") as tmp:
        folder = Path(tmp)
        for count in sizes:
            a, b, record = folder / "a.json", folder / "b.json", folder / "diff.json"
            a.write_text(build(count, "live"))
            b.write_text(build(count, "replay", 1.01))
            repeat = 1 if count >= 100_000 else args.repeat
            for name, root in roots:
                if name == "base" and count > args.base_up_to:
                    continue
                f = figures[name, count] = measure(root, a, b, record, repeat)
                print(
                    f"  {count:>8,} {name:<8} {f['load']:7.3f} {f['alone']:7.3f} {f['diff']:7.3f} {f['json']:7.3f} "
                    f"{f['memory']:6.2f}x ({f['rss_gib']:.1f} GiB) {f['record']:6.2f}x ({f['record_mib']:.0f} MiB)",
                    flush=True,
                )
    for name, _ in roots:
        if (name, 1_000) in figures and (name, 10_000) in figures:
            scale = figures[name, 10_000]["load"] / figures[name, 1_000]["load"]
            print(f"  {name}: load 10,000/1,000 {scale:.1f}x (target <= {TARGETS['load scaling']:g}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
