"""Benchmark: every command of a large capture within its time and memory bounds.

Two pairs of captures are built (derived, not recorded): one fusion of 100,000 kernels (the test
records' builders, ``tests/synthetic.py``; B's every other kernel renamed, so half pair), and
10,000 fusions made of a recorded H200 session's 26 (as ``bench_load.py`` builds them; B the same
fusions written as a replay). Each command then runs as a user runs it, ``python -m fusiondiff``
in a fresh process: ``show A``, ``diff A B``, ``diff A B --json``, and ``report A B`` in every
format (text, md, html, json, perfetto, perfetto with ``--sm-tracks``). Each is timed (wall) and
its peak resident memory read from the kernel (``wait4``), against the targets of
:data:`TARGET_S` (of CPU time: the machine is shared, and its wall time is printed beside it) and
:data:`MEMORY_MULTIPLE` times the input's bytes (both files, or A for ``show``).

    python3 benchmarks/bench_bounds.py [--only kernels|fusions] [--limit SECONDS]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

TARGET_S = 60.0
MEMORY_MULTIPLE = 4.0
COMMANDS = {
    "show": ["show", "{a}"],
    "diff": ["diff", "{a}", "{b}"],
    "diff --json": ["diff", "{a}", "{b}", "--json", "{out}/d.json"],
    "report text": ["report", "{a}", "{b}", "--format", "text", "-o", "{out}/r.txt"],
    "report md": ["report", "{a}", "{b}", "-o", "{out}/r.md"],
    "report html": ["report", "{a}", "{b}", "-o", "{out}/r.html"],
    "report json": ["report", "{a}", "{b}", "-o", "{out}/r.json"],
    "report perfetto": ["report", "{a}", "{b}", "--format", "perfetto", "-o", "{out}/r.perfetto.json"],
    "report perfetto --sm-tracks": [
        "report",
        "{a}",
        "{b}",
        "--format",
        "perfetto",
        "--sm-tracks",
        "-o",
        "{out}/s.perfetto.json",
    ],
}


def kernels_pair(count: int, folder: Path) -> tuple[Path, Path]:
    """One fusion of ``count`` kernels, A and B (every other kernel of B renamed)."""
    from fusiondiff.io.store import dumps_capture

    import synthetic as syn

    kernels_a = [syn.kernel("pointwise", g, order=g, n=3, seed=g) for g in range(count)]
    kernels_b = [syn.kernel("reduction" if g % 2 else "pointwise", g, order=g, n=3, seed=g) for g in range(count)]
    a, b = folder / f"kernels{count}_a.json", folder / f"kernels{count}_b.json"
    a.write_text(dumps_capture(syn.capture([syn.fusion(kernels=kernels_a)])))
    b.write_text(dumps_capture(syn.capture([syn.fusion(kernels=kernels_b)], kind="replay")))
    return a, b


def fusions_pair(count: int, folder: Path) -> tuple[Path, Path]:
    """``count`` fusions made of a recorded session's, live and replayed."""
    from bench_load import build_capture_json

    a, b = folder / f"fusions{count}_a.json", folder / f"fusions{count}_b.json"
    a.write_text(build_capture_json(count, "live"))
    b.write_text(build_capture_json(count, "replay"))
    return a, b


def built(kind: str, count: int, folder: Path) -> tuple[Path, Path]:
    """The pair built in a process of its own: Linux keeps a process's peak memory across exec, so a
    command started from a process that held the records would count their memory as its own."""
    subprocess.run([sys.executable, __file__, "--build", kind, str(count), str(folder)], check=True)
    return folder / f"{kind}{count}_a.json", folder / f"{kind}{count}_b.json"


def run(argv: list[str], limit_s: float) -> tuple[int, float, float, int, str]:
    """Exit code, wall seconds, CPU seconds (user and system), peak resident bytes and the last
    stderr line of ``fusiondiff ARGV``. On a machine other work shares, the CPU time is the work
    the command did; the wall time is what a user waited."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.monotonic()
    with tempfile.TemporaryFile() as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "fusiondiff", *argv], stdout=subprocess.DEVNULL, stderr=err, env=env
        )
        code, usage = None, None
        while code is None:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                code = os.waitstatus_to_exitcode(status)
            elif time.monotonic() - started > limit_s:
                process.send_signal(signal.SIGKILL)
                _, status, usage = os.wait4(process.pid, 0)
                code = -9
            else:
                time.sleep(0.05)
        process.returncode = code
        seconds = time.monotonic() - started
        err.seek(0)
        last = (err.read().decode("utf-8", "replace").strip().splitlines() or [""])[-1]
    return code, seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, last


def bench(name: str, a: Path, b: Path, out: Path, limit_s: float) -> bool:
    """Every command on the pair; True when each met both targets."""
    both = a.stat().st_size + b.stat().st_size
    print(f"\n{name}: A {a.stat().st_size / 2**20:.1f} MiB, B {b.stat().st_size / 2**20:.1f} MiB")
    print(f"  {'command':<30} {'exit':>4} {'wall s':>8} {'CPU s':>7} {'peak MiB':>9} {'x input':>8}  within")
    ok = True
    for label, template in COMMANDS.items():
        argv = [part.format(a=a, b=b, out=out) for part in template]
        code, seconds, cpu, peak, last = run(argv, limit_s)
        size = a.stat().st_size if label == "show" else both
        ratio = peak / size
        met = code in (0, 1) and cpu <= TARGET_S and ratio <= MEMORY_MULTIPLE
        ok &= met
        note = "" if code in (0, 1) else f"  ({last[:120]})"
        print(
            f"  {label:<30} {code:>4} {seconds:8.1f} {cpu:7.1f} {peak / 2**20:9.0f} {ratio:8.2f}  {'yes' if met else 'NO'}{note}",
            flush=True,
        )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("kernels", "fusions"))
    parser.add_argument("--limit", type=float, default=180.0, help="stop a command after this many seconds")
    parser.add_argument("--kernels", type=int, default=100_000)
    parser.add_argument("--fusions", type=int, default=10_000)
    parser.add_argument("--build", nargs=3, metavar=("KIND", "COUNT", "DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build:
        kind, count, folder = args.build
        (kernels_pair if kind == "kernels" else fusions_pair)(int(count), Path(folder))
        return 0
    print(f"targets: each command within {TARGET_S:g} s and {MEMORY_MULTIPLE:g}x its input's bytes of peak memory")
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        out = folder / "out"
        out.mkdir()
        for kind, count in (("kernels", args.kernels), ("fusions", args.fusions)):
            if args.only in (None, kind):
                a, b = built(kind, count, folder)
                what = f"one fusion of {count} kernels" if kind == "kernels" else f"{count} fusions"
                ok &= bench(what, a, b, out, args.limit)
    print("\nall within the targets" if ok else "\nsome past the targets")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
