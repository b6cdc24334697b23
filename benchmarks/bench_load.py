"""Benchmark: load, ``show`` and ``diff`` of captures of a whole session, and the matching worst cases.

Captures of 100, 1,000 and 10,000 fusions are built from the 26 fusion records of a recorded H200
capture (``tests/data/fidelity/llama3/live.json``), replicated with distinct names and definitions
(each copy gets one more output, a constant of its own, so its definition hash and graph differ),
written as ``fusiondiff`` writes captures, then:

- **load**: ``store.load_capture`` (msgspec, the one decoder, with the value rules on the fields);
- **show**: load and ``render_capture_text``, as ``fusiondiff show`` does; and the HTML a notebook
  shows of the capture (``capture_html``, once);
- **diff**: load two such files (B the same fusions written as a replay) and ``diff``, then render
  the text, as ``fusiondiff diff`` does;
- **peak memory** of a load (``tracemalloc``, in a separate pass since it slows Python down) over
  the file's size.

Then the cases of issue #13: two captures of 544 fusions diffed; 100 against 100 fusions
with 1,000-line definitions that drifted by one line and changed names (every pair found by the
similar-definition pass, the worst case of matching); one fusion of 20,000 kernels against itself
with every other kernel renamed: its kernel alignment (``match_kernels``), and the whole
``fusiondiff diff`` of it (two loads, diff and render). Every figure is printed with its target and
the ratio figure/target, and the targeted ones again side by side at the end, in one run. A case
that runs past ``--limit`` seconds is stopped and reported as such (code from before the fixes
ran the whole diff of the 20,000-kernel fusion for more than ten minutes). Takes about two
minutes on the 2-core CPU machine.

    python3 benchmarks/bench_load.py [--limit SECONDS] [--root OTHER_CHECKOUT]
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import gzip
import json
import os
import signal
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if "--root" in sys.argv:  # time another checkout's fusiondiff (the figures before a change)
    ROOT = Path(sys.argv[sys.argv.index("--root") + 1]).resolve()
sys.path.insert(0, str(ROOT))

try:
    from fusiondiff.records import definition  # noqa: E402  since the package's layers (issue #42)
except ImportError:  # a checkout from before
    from fusiondiff import definition  # type: ignore[no-redef]  # noqa: E402
try:
    from fusiondiff.records import traffic  # noqa: E402  since issue #43: a cache of gathers per definition
except ImportError:
    traffic = None  # type: ignore[assignment]
from fusiondiff.records.definition import definition_hash  # noqa: E402

try:
    from fusiondiff.records.definition import tagged_structural_hash  # noqa: E402  since issue #28
except ImportError:  # a checkout from before captures held their graph hashes
    tagged_structural_hash = None  # type: ignore[assignment]

sys.path.insert(0, str(ROOT / "tests"))
try:
    import synthetic as syn  # noqa: E402  the records' builders the tests use
except ImportError:  # a checkout from before they moved to tests/
    from fusiondiff.diff import synthetic as syn  # type: ignore[no-redef]  # noqa: E402
from fusiondiff.diff import compare  # noqa: E402
from fusiondiff.diff.core import diff  # noqa: E402
from fusiondiff.diff.match import match_fusions, match_kernels  # noqa: E402
from fusiondiff.io.store import dumps_capture, load_capture  # noqa: E402
from fusiondiff.report.formats.diff_text import render_diff_text  # noqa: E402
from fusiondiff.report.formats.html import capture_html  # noqa: E402
from fusiondiff.report.text import render_capture_text  # noqa: E402

SOURCE = ROOT / "tests" / "data" / "fidelity" / "llama3" / "live.json"
GEMMA = ROOT / "tests" / "data" / "roundtrip_gemma"
SIZES = (100, 1_000, 10_000)
TARGETS_S = {
    "load 10000": 2.0,
    "diff 10000": 5.0,
    "diff 544": 0.5,
    "match 100x100 x 1000 lines": 5.0,
    "diff 20000 kernels": 5.0,  # "a few seconds"
}
MEMORY_TARGET = 4.0
TARGETED: list[tuple[str, float | None, float]] = []
"""Every figure that has a target, in the order measured: name, seconds (None if stopped), target."""


def build_capture_json(count: int, kind: str = "live", graph_hashes: bool = True) -> str:
    """A capture of ``count`` fusions made of the recorded ones, each with its own name and definition,
    and (``graph_hashes``, where the checkout records them) its graph hash, as the recorder writes it."""
    data = json.loads(SOURCE.read_text())
    base = data["fusions"]
    fusions = []
    for i in range(count):
        f = dict(base[i % len(base)])
        definition = f["definition"].rstrip("\n") + f"\n    fd.add_output(fd.define_scalar({i}, dtype=DataType.Int))\n"
        f.update(name=f"nvFusion{i}", definition=definition, definition_hash=definition_hash(definition))
        if graph_hashes and tagged_structural_hash is not None:
            f["graph_hash"] = tagged_structural_hash(definition)
        fusions.append(f)
    data.update(fusions=fusions, kind=kind, source=f"bench_load: {count} fusions from {SOURCE.name}")
    return json.dumps(data, indent=1) + "\n"  # as store.dumps_capture writes


def clear_caches() -> None:
    """Empty every cache kept per definition text (canonical text, graph hash, parsed statements,
    node digests, float literals), whichever of them the checkout measured has."""
    for module in (definition, compare, *([traffic] if traffic is not None else [])):
        for value in vars(module).values():
            getattr(value, "cache_clear", lambda: None)()


CPU_S: list[float] = [0.0]
"""The process's CPU time of the last :func:`timed` figure (best of its calls): on a machine other
work shares, wall time tells how long a user waited, CPU time how much work the code did."""


def timed(call: Callable[[], Any], repeat: int = 1) -> tuple[float, Any]:
    """Best wall time of ``repeat`` calls, and the last result (the best CPU time in ``CPU_S``).
    The definition caches are emptied before each call: no figure gains from work an earlier call did."""
    best, best_cpu, result = float("inf"), float("inf"), None
    for _ in range(repeat):
        clear_caches()
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        result = call()
        best = min(best, time.perf_counter() - start)
        best_cpu = min(best_cpu, time.process_time() - start_cpu)
    CPU_S[0] = best_cpu
    return best, result


class _Stopped(Exception):
    """A case ran past its limit."""


def timed_within(limit_s: int, call: Callable[[], Any]) -> tuple[float | None, Any]:
    """:func:`timed` with one call, stopped after ``limit_s`` seconds (then ``(None, None)``).
    SIGALRM interrupts the Python code that every slow path of the diff runs in."""

    def stop(signum: int, frame: Any) -> None:
        raise _Stopped

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(limit_s)
    try:
        return timed(call)
    except _Stopped:
        return None, None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def peak_bytes(call: Callable[[], Any]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def long_definition(index: int, drift: bool) -> str:
    lines = ["def nvfuser_fusion(fd : FusionDefinition) -> None :"]
    lines.append(
        "    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)"
    )
    for k in range(1, 1_000):
        lines.append(f"    t{k} = fd.ops.mul(t{k - 1}, {index * 10_000 + k}.0)")
    if drift:
        lines[500] = "    t499 = fd.ops.add(t498, 1.0)"
    lines.append("    fd.add_output(t999)")
    return "\n".join(lines) + "\n"


def row(name: str, seconds: float, target: float | None = None, extra: str = "", case: str | None = None) -> None:
    """Print one figure; one with a target is kept for :func:`print_targets` under ``case`` (or ``name``)."""
    ratio = f"{seconds / target:6.2f}x of {target:g} s" if target else ""
    print(f"  {name:<42} {seconds:9.3f} s  {ratio:<20} cpu {CPU_S[0]:7.3f} s  {extra}", flush=True)
    if target:
        TARGETED.append((case or name, seconds, target))


def stopped_row(name: str, limit_s: int, target: float | None = None) -> None:
    print(f"  {name:<42} stopped after {limit_s} s (past --limit)", flush=True)
    if target:
        TARGETED.append((name, None, target))


def print_targets() -> None:
    """The targeted figures side by side: figure, target, ratio, met."""
    print("\nfigures with a target, side by side:")
    print(f"  {'case':<42} {'figure':>10}  {'target':>8}  {'ratio':>7}  met")
    for name, seconds, target in TARGETED:
        if seconds is None:
            print(f"  {name:<42} {'stopped':>10}  {target:>6g} s  {'-':>7}  no")
        else:
            met = "yes" if seconds < target else "no"
            print(f"  {name:<42} {seconds:8.3f} s  {target:>6g} s  {seconds / target:6.2f}x  {met}")


def many_kernels_captures(count: int, folder: Path) -> tuple[Path, Path]:
    """One fusion of ``count`` kernels, written twice: B's has every other kernel renamed (a
    reduction where A has a pointwise kernel), so half of them pair and its segmentation differs."""
    kernels_a = [syn.kernel("pointwise", g, order=g, n=3, seed=g) for g in range(count)]
    kernels_b = [syn.kernel("reduction" if g % 2 else "pointwise", g, order=g, n=3, seed=g) for g in range(count)]
    a, b = folder / f"kernels{count}_a.json", folder / f"kernels{count}_b.json"
    a.write_text(dumps_capture(syn.capture([syn.fusion(kernels=kernels_a)])))
    b.write_text(dumps_capture(syn.capture([syn.fusion(kernels=kernels_b)], kind="replay")))
    return a, b


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--root", metavar="DIR", help="import fusiondiff from this checkout instead (figures before a change)"
    )
    parser.add_argument(
        "--limit",
        type=int,
        default=300,
        metavar="SECONDS",
        help="stop the whole diff of the 20,000-kernel fusion after this long (default 300)",
    )
    args = parser.parse_args()
    print(f"bench_load on {os.cpu_count()} CPU(s), Python {sys.version.split()[0]}, fusiondiff from {ROOT}")
    with tempfile.TemporaryDirectory(prefix="fusiondiff-bench-") as tmp:
        folder = Path(tmp)
        print("\nload, show, diff (best of 3 at every size, so the scaling compares like with like):")
        loads: dict[int, float] = {}
        load_cpu: dict[int, float] = {}
        diffs: dict[int, tuple[float, float]] = {}
        for count in SIZES:
            a, b = folder / f"a{count}.json", folder / f"b{count}.json"
            a.write_text(build_capture_json(count))
            b.write_text(build_capture_json(count, kind="replay"))
            size = a.stat().st_size
            repeat = 3
            load_s, capture = timed(lambda a=a: load_capture(a), repeat)
            loads[count] = load_s
            load_cpu[count] = CPU_S[0]
            kernels = sum(len(f.kernels) for f in capture.fusions)
            del capture
            label = f"{count} fusions ({kernels} kernels, {size / 2**20:.1f} MiB)"
            print(f" {label}")
            row("load", load_s, TARGETS_S.get(f"load {count}"), case=f"load, {count:,} fusions")
            show_s, text = timed(lambda a=a: render_capture_text(load_capture(a)), repeat)
            row("show (load + render)", show_s, None, f"{text.count(chr(10))} lines")
            html_s, page = timed(lambda a=a: capture_html(load_capture(a)))
            row("notebook HTML (load + render)", html_s, None, f"{len(page) / 2**20:.1f} MiB")

            def do_diff(a: Path = a, b: Path = b) -> Any:
                ca, cb = load_capture(a), load_capture(b)
                result = diff(ca, cb)
                return render_diff_text(result), result

            diff_s, (_, result) = timed(do_diff, repeat)
            diffs[count] = (diff_s, CPU_S[0])
            row(
                "diff (2 loads + diff + render)",
                diff_s,
                TARGETS_S.get(f"diff {count}"),
                f"{len(result.pairs)} pairs",
                case=f"diff, {count:,} vs {count:,} fusions",
            )
            if count == SIZES[-1] and tagged_structural_hash is not None:
                # the same fusions in files written before issue #28, without their graph hashes:
                # the differ hashes every definition itself (the files users already have)
                a.write_text(build_capture_json(count, graph_hashes=False))
                b.write_text(build_capture_json(count, kind="replay", graph_hashes=False))
                old_s, _ = timed(do_diff, repeat)
                row("  same, files without graph hashes", old_s, None, "written before issue #28")
                a.write_text(build_capture_json(count))
            peak = peak_bytes(lambda a=a: load_capture(a))
            print(
                f"  {'peak memory of a load':<42} {peak / 2**20:9.1f} MiB  {peak / size:6.2f}x of the file "
                f"(target < {MEMORY_TARGET:g}x)",
                flush=True,
            )
        print(
            f" scaling of load: 1,000/100 {loads[1_000] / loads[100]:.1f}x, "
            f"10,000/1,000 {loads[10_000] / loads[1_000]:.1f}x (10x is linear); CPU time 10,000/1,000 "
            f"{load_cpu[10_000] / load_cpu[1_000]:.1f}x"
        )
        print(
            f" scaling of diff, 10,000/1,000: wall {diffs[10_000][0] / diffs[1_000][0]:.1f}x, "
            f"CPU time {diffs[10_000][1] / diffs[1_000][1]:.1f}x"
        )

        print("\nissue #13 cases:")
        a, b = folder / "a544.json", folder / "b544.json"
        a.write_text(build_capture_json(544))
        b.write_text(build_capture_json(544, kind="replay"))
        s, _ = timed(lambda: render_diff_text(diff(load_capture(a), load_capture(b))), 3)
        row("diff of two 544-fusion captures", s, TARGETS_S["diff 544"])
        # a recorded 544-record step (gemma-2-2b under thunderfx on the H200): against a copy of
        # itself (the self-diff), and against its round trip's merged replay (27 fusions)
        gemma, copy, replay = folder / "gemma.json", folder / "gemma_copy.json", folder / "gemma_replay.json"
        gemma.write_bytes(gzip.decompress((GEMMA / "live.json.gz").read_bytes()))
        copy.write_bytes(gemma.read_bytes())
        replay.write_bytes(gzip.decompress((GEMMA / "replay.json.gz").read_bytes()))
        s, _ = timed(lambda: render_diff_text(diff(load_capture(gemma), load_capture(copy))), 3)
        row("diff, recorded gemma-2-2b step (544) x2", s, TARGETS_S["diff 544"])
        s, _ = timed(lambda: render_diff_text(diff(load_capture(gemma), load_capture(replay))), 3)
        row("diff, same step vs its round trip's replay", s, None)

    fusions_a = [
        syn.fusion(f"nvFusion{i}", definition=long_definition(i, False), kernels=[syn.kernel(n=5)]) for i in range(100)
    ]
    fusions_b = [
        syn.fusion(f"fusion{i}", trace=None, definition=long_definition(i, True), kernels=[syn.kernel(n=5)])
        for i in reversed(range(100))
    ]
    s, (matches, left) = timed(lambda: match_fusions(fusions_a, fusions_b))
    by = {m.matched_by for m in matches}
    row(
        "match 100 vs 100, 1,000-line definitions",
        s,
        TARGETS_S["match 100x100 x 1000 lines"],
        f"{len(matches)} pairs by {sorted(by)}, {len(left)} left",
    )
    ca, cb = syn.capture(fusions_a), syn.capture(fusions_b, kind="replay")
    s, _ = timed(lambda: diff(ca, cb))
    row("diff of the same (match + compare + rules)", s, TARGETS_S["match 100x100 x 1000 lines"])

    count = 20_000
    kernels_a = [syn.kernel("pointwise", g, order=g, n=3, seed=g) for g in range(count)]
    kernels_b = [syn.kernel("reduction" if g % 2 else "pointwise", g, order=g, n=3, seed=g) for g in range(count)]
    s, km = timed(lambda: match_kernels(kernels_a, kernels_b))
    row(
        "kernel alignment, 20,000 kernels, half renamed",
        s,
        None,
        f"{len(km.pairs)} pairs, {len(km.only_a)}+{len(km.only_b)} unmatched",
    )
    few_a = [dataclasses.replace(k, normalized_name=f"nvfuser_pointwise_g{k.order % 8}") for k in kernels_a]
    few_b = [
        dataclasses.replace(k, normalized_name=f"nvfuser_{'reduction' if k.order % 2 else 'pointwise'}_g{k.order % 8}")
        for k in kernels_b
    ]
    s, km = timed(lambda: match_kernels(few_a, few_b))
    row("same, 8 names repeated (no unique anchors)", s, None, f"{len(km.pairs)} pairs")
    whole_diff_of_many_kernels(count, args.limit)
    print_targets()
    print("\nH200 figures of the round trip are not measured here (no GPU): see benchmarks/RESULTS.md")
    return 0


def whole_diff_of_many_kernels(count: int, limit_s: int) -> None:
    """``fusiondiff diff`` of the 20,000-kernel fusion: two loads, diff and render."""
    name = f"whole diff, {count:,} kernels, half renamed"
    with tempfile.TemporaryDirectory(prefix="fusiondiff-bench-") as tmp:
        a, b = many_kernels_captures(count, Path(tmp))

        def do_diff() -> Any:
            result = diff(load_capture(a), load_capture(b))
            return render_diff_text(result), result

        s, answer = timed_within(limit_s, do_diff)
    if s is None:
        stopped_row(name, limit_s, TARGETS_S["diff 20000 kernels"])
        return
    _, result = answer
    (pair,) = result.pairs
    extra = f"{len(pair.kernels)} kernel pairs, {len(pair.unmatched_kernels)} unmatched, (2 loads + diff + render)"
    row(name, s, TARGETS_S["diff 20000 kernels"], extra)


if __name__ == "__main__":
    raise SystemExit(main())
