"""Benchmark (GPU): six ways of timing the seed model's fusions, live and replayed, side by side.

    python3 benchmarks/bench_timing_methods.py OUT            # writes OUT.json and OUT.md
    python3 benchmarks/bench_timing_methods.py OUT --fusions 3 --repeats 5
    python3 benchmarks/bench_timing_methods.py --render OUT.json   # summarize again, no GPU

The methods:

- ``seed``: the seed issue's (Thunder #1869): 5 warm-ups, one call under torch.profiler, the sum of
  every event's ``device_time``; one figure per measurement;
- ``kerneltime``: Thunder's ``KernelTime`` (``thunder.dynamo.benchmark_utils``, torch.profiler
  inside ``adaptive_autorange``, no L2 flush), its run time bounded (see ``KERNELTIME_OPTIONS``);
- ``do_bench``: triton's ``do_bench`` (CUDA events around the host call, L2 flushed by triton);
- ``nvfuser``: nvFuser's ``PythonProfiler`` through fusiondiff's nvfuser timer (5 warm-ups, 30
  cold-L2 samples);
- ``fusiondiff-cold`` / ``fusiondiff-warm``: fusiondiff's protocol with the Kineto timer, 30 samples
  after 5 warm-ups, L2 flushed before each sample or not.

The fusions are the first ``--fusions`` nvFusions of one forward of the seed model (litgpt
Llama-3-8B config, ``--layers`` layers, block 1024, batch 4, bf16, thunderfx). **Live**: timed in
the process that ran Thunder, on Thunder's own FusionDefinition objects and copies of the inputs it
passed (its execute options too). **Replay**: the printed definitions rebuilt in a fresh process,
on the same input values (storage, strides and offsets saved by the live side), with the exact
constants and Index scalars put back as ``fusiondiff repro`` does. CUPTI takes one
subscriber per process, so the torch.profiler methods (and do_bench) and nvFuser's profiler run in
separate processes: four children in all (live and replay, per subscriber).

Per fusion and method: the median of ``--repeats`` measurements, their spread (coefficient of
variation), live-vs-replay disagreement, and the wall time one measurement costs (the device is
held that long). Then a planted slowdown: the seed's RMSNorm with 1056 rows instead of 1024 (3.1 %
more data) against the original, and the original against itself: which methods call it SLOWER,
and the identical runs SAME. Verdicts use fusiondiff's statistics (``diff.stats.compare_timing``)
on each method's raw samples (one measurement a side) and on the ``--repeats`` figures; the
"natural" verdict reads two single figures the way a person would, with fusiondiff's 2 % floor.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
GROUPS = {"torch": ("seed", "kerneltime", "do_bench", "fusiondiff-cold", "fusiondiff-warm"), "nvfuser": ("nvfuser",)}
"""Methods by CUPTI subscriber: each group runs in its own processes."""
METHODS = tuple(m for group in GROUPS.values() for m in group)
WARMUP, SAMPLES = 5, 30
KERNELTIME_OPTIONS = {"min_run_time": 0.002, "max_run_time": 0.05}
"""Seconds of *kernel* time (KernelTime's clock): the defaults (0.01 and 10) can take minutes per fusion."""
PLANTED_ROWS = (1024, 1056)


# ------------------------------------------------------------------------------------ measuring


class Timers:
    """The methods, each measuring ``run`` once: its figure (ns), raw samples (ns), wall time (s)."""

    def __init__(self, group: str) -> None:
        import torch

        l2 = torch.cuda.get_device_properties(0).L2_cache_size or 64 * 2**20
        self.flush_buffer = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
        self.unavailable: dict[str, str] = {}
        if group != "torch":
            return
        try:
            from thunder.dynamo.benchmark_utils import KernelTime

            self.kernel_time: Any = KernelTime(**KERNELTIME_OPTIONS)
        except ImportError as exc:
            self.unavailable["kerneltime"] = f"thunder.dynamo.benchmark_utils.KernelTime not importable: {exc}"
        try:
            import triton.testing

            self.do_bench: Any = triton.testing.do_bench
        except ImportError as exc:
            self.unavailable["do_bench"] = f"triton not importable: {exc}"

    def flush(self) -> None:
        self.flush_buffer.zero_()

    def canary(self) -> None:
        self.flush_buffer[:256].zero_()

    def measure(self, method: str, run: Callable[[], object]) -> dict[str, Any]:
        import torch

        torch.cuda.synchronize()
        start = time.perf_counter()
        samples = getattr(self, "_" + method.replace("-", "_"))(run)
        torch.cuda.synchronize()
        wall = time.perf_counter() - start
        return {"figure_ns": statistics.median(samples), "samples_ns": samples, "wall_s": wall}

    def _seed(self, run: Callable[[], object]) -> list[float]:
        from torch.profiler import ProfilerActivity, profile

        for _ in range(5):
            run()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            run()
        return [1000.0 * sum(e.device_time for e in prof.events())]

    def _kerneltime(self, run: Callable[[], object]) -> list[float]:
        measurement = self.kernel_time.time("run()", globals={"run": run})
        cleanup = getattr(self.kernel_time.inner_timer, "cleanup", None)
        if callable(cleanup):
            cleanup()
        return [t * 1e9 for t in measurement.times]

    def _do_bench(self, run: Callable[[], object]) -> list[float]:
        try:
            times = self.do_bench(run, return_mode="all")
        except TypeError:  # an older triton: one figure only
            times = [self.do_bench(run)]
        return [t * 1e6 for t in times]

    def _protocol(self, run: Callable[[], object], timer: str, l2_mode: str) -> list[float]:
        import torch

        from fusiondiff.recording.sources import kernel_source_for
        from fusiondiff.recording.timing import kernel_records, measure
        from fusiondiff.records.model import TimingProtocol

        protocol = TimingProtocol(method=timer, warmup=WARMUP, samples=SAMPLES, l2_mode=l2_mode)  # type: ignore[arg-type]
        source = kernel_source_for(timer, self.canary)
        sampled = measure(run, protocol, source, self.flush, torch.cuda.synchronize)
        _, timing, _ = kernel_records(sampled, timer=source.name)
        return list(timing.samples_ns)

    def _fusiondiff_cold(self, run: Callable[[], object]) -> list[float]:
        return self._protocol(run, "kineto", "cold")

    def _fusiondiff_warm(self, run: Callable[[], object]) -> list[float]:
        return self._protocol(run, "kineto", "warm")

    def _nvfuser(self, run: Callable[[], object]) -> list[float]:
        return self._protocol(run, "nvfuser", "cold")


def measure_fusions(
    group: str, fusions: list[dict[str, Any]], repeats: int, timers: Timers
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """``{fusion name: {method: [measurement per repeat]}}``; a method that is not available, or
    fails, has an ``error`` entry instead."""
    results: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for fusion in fusions:
        fd, inputs, kwargs = fusion["fd"], fusion["inputs"], fusion["kwargs"]

        def run(fd: Any = fd, inputs: Any = inputs, kwargs: Any = kwargs) -> object:
            return fd.execute(inputs, **kwargs)

        per_method: dict[str, list[dict[str, Any]]] = {}
        for method in GROUPS[group]:
            if method in timers.unavailable:
                per_method[method] = [{"error": timers.unavailable[method]}]
                continue
            try:
                per_method[method] = [timers.measure(method, run) for _ in range(repeats)]
            except Exception as exc:  # noqa: BLE001 - a method's failure is a result
                per_method[method] = [{"error": f"{type(exc).__name__}: {exc}"}]
        results[fusion["name"]] = per_method
        print(f"  {group}: {fusion['name']} measured", file=sys.stderr, flush=True)
    return results


# ------------------------------------------------------------------------------------ fusions


def live_fusions(layers: int, limit: int) -> tuple[list[dict[str, Any]], Any]:
    """The first ``limit`` distinct FusionDefinitions one forward of the seed model executes, with
    faithful copies of the inputs Thunder passed (taken before they ran) and its execute options."""
    import nvfuser_direct
    import torch

    from fusiondiff.front.seed import build_seed_model
    from fusiondiff.recording.inputs import faithful_copy
    from fusiondiff.recording.nvfuser_adapter import ir_constants

    _, compiled, idx = build_seed_model(n_layer=layers)
    compiled(idx)  # compile, outside the hook
    torch.cuda.synchronize()
    seen: dict[int, dict[str, Any]] = {}
    fd_class = nvfuser_direct.FusionDefinition
    original = fd_class.execute

    def execute(fd: Any, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        if id(fd) not in seen and len(seen) < limit:
            keep = {k: v for k, v in kwargs.items() if k in ("_enable_options", "_disable_options")}
            device = kwargs.get("device")
            if device is not None:
                keep["device"] = device if isinstance(device, int) else getattr(device, "index", None) or 0
            seen[id(fd)] = {
                "name": f"fusion{len(seen)}",
                "fd": fd,
                "inputs": [faithful_copy(v) for v in inputs],
                "kwargs": keep,
                "definition": str(fd),
            }
        outputs = original(fd, inputs, *args, **kwargs)
        if id(fd) in seen and "constants" not in seen[id(fd)]:
            # printed definitions keep 6 significant digits: the replay puts the exact ones back
            seen[id(fd)]["constants"] = ir_constants(fd)[0]
        return outputs

    fd_class.execute = execute
    try:
        compiled(idx)
        torch.cuda.synchronize()
    finally:
        fd_class.execute = original
    return list(seen.values()), compiled


def save_fusions(fusions: list[dict[str, Any]], path: Path) -> None:
    """Definitions, execute options and input storages (CPU), for the replay in a fresh process."""
    import torch

    from fusiondiff.recording.inputs import flat_storage

    saved = []
    for f in fusions:
        inputs = []
        for v in f["inputs"]:
            if isinstance(v, torch.Tensor):
                inputs.append(("tensor", flat_storage(v).cpu(), tuple(v.shape), tuple(v.stride()), v.storage_offset()))
            else:
                inputs.append(("scalar", v))
        saved.append(
            {
                "name": f["name"],
                "definition": f["definition"],
                "constants": f.get("constants", ()),
                "kwargs": f["kwargs"],
                "inputs": inputs,
            }
        )
    torch.save(saved, path)


def build_definition(text: str, constants: Any = ()) -> Any:
    """A FusionDefinition built from a printed definition (the function it defines, called on fd),
    its exact constants and Index scalars restored as ``fusiondiff repro`` does."""
    from nvfuser_direct import DataType, FusionDefinition

    from fusiondiff.replay.rebuild import faithful_definition

    text = faithful_definition(text, constants).text
    function = next(n.name for n in ast.parse(text).body if isinstance(n, ast.FunctionDef))
    namespace: dict[str, Any] = {"FusionDefinition": FusionDefinition, "DataType": DataType}
    exec(compile(text, "<definition>", "exec"), namespace)
    with FusionDefinition() as fd:
        namespace[function](fd)
    return fd


def replayed_fusions(path: Path) -> list[dict[str, Any]]:
    import torch

    fusions = []
    for f in torch.load(path, weights_only=False):
        inputs = []
        for item in f["inputs"]:
            if item[0] == "tensor":
                _, flat, shape, stride, offset = item
                inputs.append(flat.cuda().as_strided(shape, stride, offset))
            else:
                inputs.append(item[1])
        fusions.append({**f, "fd": build_definition(f["definition"], f.get("constants", ())), "inputs": inputs})
    return fusions


def planted_fusions() -> list[dict[str, Any]]:
    """The seed's RMSNorm at 1024 rows (A) and 1056 rows (B, 3.1 % more data)."""
    import torch

    sys.path.insert(0, str(REPO))
    from repro.zoo.common import RMSNORM, build

    out = []
    for rows in PLANTED_ROWS:
        fd = build(RMSNORM.replace("1024", str(rows)), "define_rmsnorm")
        torch.manual_seed(0)
        x = torch.randn(4, rows, 4096, dtype=torch.bfloat16, device="cuda")
        w = torch.randn(4096, dtype=torch.bfloat16, device="cuda")
        out.append({"name": f"rmsnorm_{rows}", "fd": fd, "inputs": [x, w], "kwargs": {}})
    return out


def measure_planted(group: str, repeats: int, timers: Timers) -> dict[str, Any]:
    """Per method: A, B and A again, interleaved ``repeats`` times (drift hits all three alike)."""
    a, b = planted_fusions()
    for fusion in (a, b):  # compile outside the timed window
        fusion["fd"].execute(fusion["inputs"])
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for method in GROUPS[group]:
        if method in timers.unavailable:
            runs[method] = {"error": timers.unavailable[method]}  # type: ignore[dict-item]
            continue
        sides: dict[str, list[dict[str, Any]]] = {"A": [], "B": [], "A2": []}
        try:
            for _ in range(repeats):
                for side, fusion in (("A", a), ("B", b), ("A2", a)):
                    fd, inputs = fusion["fd"], fusion["inputs"]
                    sides[side].append(timers.measure(method, lambda fd=fd, inputs=inputs: fd.execute(inputs)))
        except Exception as exc:  # noqa: BLE001 - a method's failure is a result
            runs[method] = {"error": f"{type(exc).__name__}: {exc}"}  # type: ignore[dict-item]
            continue
        runs[method] = sides
    return runs


def child(args: argparse.Namespace) -> None:
    workdir = Path(args.workdir)
    timers = Timers(args.group)
    result: dict[str, Any] = {"side": args.child, "group": args.group, "unavailable": timers.unavailable}
    if args.child == "live":
        fusions, _model = live_fusions(args.layers, args.fusions)
        if args.group == "torch":
            save_fusions(fusions, workdir / "fusions.pt")
    else:
        fusions = replayed_fusions(workdir / "fusions.pt")
    result["definitions"] = {f["name"]: f["definition"] for f in fusions}
    for f in fusions:  # compile outside the timed window
        f["fd"].execute(f["inputs"], **f["kwargs"])
    result["fusions"] = measure_fusions(args.group, fusions, args.repeats, timers)
    if args.child == "replay":
        result["planted"] = measure_planted(args.group, args.repeats, timers)
    (workdir / f"{args.child}-{args.group}.json").write_text(json.dumps(result))


# ------------------------------------------------------------------------------------ summary


def _figures(measurements: list[dict[str, Any]]) -> list[float]:
    return [m["figure_ns"] for m in measurements if "figure_ns" in m]


def _cv_pct(values: list[float]) -> float | None:
    return 100 * statistics.stdev(values) / statistics.fmean(values) if len(values) > 1 else None


def _verdict(a: list[float], b: list[float]) -> str:
    from fusiondiff.diff.stats import compare_timing
    from fusiondiff.records.model import Timing

    if not a or not b:
        return "n/a"
    return str(compare_timing(Timing(samples_ns=tuple(a)), Timing(samples_ns=tuple(b))).verdict)


def _natural(a: float, b: float) -> str:
    from fusiondiff.diff.stats import RELATIVE_FLOOR

    ratio = b / a - 1
    return "SAME" if abs(ratio) < RELATIVE_FLOOR else ("SLOWER" if ratio > 0 else "FASTER")


def summarize(runs: dict[str, Any]) -> dict[str, Any]:
    """Per method and fusion: medians, spreads, live-vs-replay, cost; and the planted verdicts."""
    per_method: dict[str, Any] = {}
    for group, methods in GROUPS.items():
        live = runs.get(f"live-{group}", {}).get("fusions", {})
        replay = runs.get(f"replay-{group}", {}).get("fusions", {})
        for method in methods:
            rows = {}
            for name in sorted(set(live) | set(replay), key=lambda n: int(n.removeprefix("fusion"))):
                lm, rm = live.get(name, {}).get(method, []), replay.get(name, {}).get(method, [])
                lf, rf = _figures(lm), _figures(rm)
                errors = [m["error"] for m in lm + rm if "error" in m]
                rows[name] = {
                    "live_median_ns": statistics.median(lf) if lf else None,
                    "live_cv_pct": _cv_pct(lf),
                    "replay_median_ns": statistics.median(rf) if rf else None,
                    "replay_cv_pct": _cv_pct(rf),
                    "replay_vs_live_pct": 100 * (statistics.median(rf) / statistics.median(lf) - 1)
                    if lf and rf
                    else None,
                    "cost_s": statistics.fmean([m["wall_s"] for m in lm + rm if "wall_s" in m]) if lf or rf else None,
                    "errors": sorted(set(errors)),
                }
            per_method[method] = rows
    planted: dict[str, Any] = {}
    for group in GROUPS:
        for method, sides in runs.get(f"replay-{group}", {}).get("planted", {}).items():
            if "error" in sides:
                planted[method] = {"error": sides["error"]}
                continue
            fa, fb, fa2 = (_figures(sides[s]) for s in ("A", "B", "A2"))
            planted[method] = {
                "b_over_a": statistics.median(fb) / statistics.median(fa),
                "a2_over_a": statistics.median(fa2) / statistics.median(fa),
                "slowdown_samples": _verdict(sides["A"][0]["samples_ns"], sides["B"][0]["samples_ns"]),
                "identical_samples": _verdict(sides["A"][0]["samples_ns"], sides["A2"][0]["samples_ns"]),
                "slowdown_repeats": _verdict(fa, fb),
                "identical_repeats": _verdict(fa, fa2),
                "slowdown_natural": _natural(fa[0], fb[0]),
                "identical_natural": _natural(fa[0], fa2[0]),
            }
    return {"methods": per_method, "planted": planted}


def overview(summary: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    """Per method, over every fusion and both sides: the median and largest spread (CV of the
    repeated figures), the median and largest live-vs-replay disagreement (absolute), and the
    median cost of one measurement: the figures the methods are ranked by."""

    def med(values: list[float]) -> float | None:
        return statistics.median(values) if values else None

    out: dict[str, dict[str, float | None]] = {}
    for method, rows in summary["methods"].items():
        cvs = [r[k] for r in rows.values() for k in ("live_cv_pct", "replay_cv_pct") if r[k] is not None]
        gaps = [abs(r["replay_vs_live_pct"]) for r in rows.values() if r["replay_vs_live_pct"] is not None]
        costs = [r["cost_s"] for r in rows.values() if r["cost_s"] is not None]
        out[method] = {
            "median_cv_pct": med(cvs),
            "max_cv_pct": max(cvs) if cvs else None,
            "median_abs_replay_vs_live_pct": med(gaps),
            "max_abs_replay_vs_live_pct": max(gaps) if gaps else None,
            "median_cost_s": med(costs),
        }
    return out


def _us(ns: float | None) -> str:
    return "-" if ns is None else f"{ns / 1000:.2f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _cell(text: str) -> str:
    """One table cell: no line breaks or pipes, at most 200 characters."""
    return " ".join(text.split()).replace("|", "/")[:200]


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f}"


def markdown(summary: dict[str, Any], meta: dict[str, Any]) -> str:
    lines = [
        "# Timing methods on the seed model's fusions",
        "",
        f"{meta['fusions']} fusions of the seed model ({meta['layers']} layers), {meta['repeats']} measurements "
        f"per method, fusion and side; {meta['wall_s']:.0f} s in all. Medians in us; CV: coefficient of "
        "variation of the repeated figures; replay/live: difference of the medians; cost: wall time of one "
        "measurement.",
        "",
        "## Overview",
        "",
        "Per method, over the fusions and both sides: spread (CV % of the repeated figures), live-vs-replay "
        "disagreement (|replay/live - 1| %), cost of one measurement. Lower is better in every column; the "
        "smallest of each column is in bold.",
        "",
        "| method | median CV % | largest CV % | median live-vs-replay % | largest live-vs-replay % | median cost s |",
        "|---|---|---|---|---|---|",
    ]
    figures = overview(summary)
    columns = ("median_cv_pct", "max_cv_pct", "median_abs_replay_vs_live_pct", "max_abs_replay_vs_live_pct")
    best = {c: min((f[c] for f in figures.values() if f[c] is not None), default=None) for c in columns}
    for method, f in figures.items():
        cells = ["-" if f[c] is None else (f"**{f[c]:.2f}**" if f[c] == best[c] else f"{f[c]:.2f}") for c in columns]
        cost = "-" if f["median_cost_s"] is None else f"{f['median_cost_s']:.3f}"
        lines.append(f"| {method} | {' | '.join(cells)} | {cost} |")
    lines.append("")
    for method, rows in summary["methods"].items():
        cost = {name: "-" if r["cost_s"] is None else f"{r['cost_s']:.3f}" for name, r in rows.items()}
        lines += [
            f"## {method}",
            "",
            "| fusion | live us | live CV % | replay us | replay CV % | replay/live % | cost s | errors |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for name, r in rows.items():
            lines.append(
                f"| {name} | {_us(r['live_median_ns'])} | {_pct(r['live_cv_pct'])} | {_us(r['replay_median_ns'])} "
                f"| {_pct(r['replay_cv_pct'])} | {_signed(r['replay_vs_live_pct'])} "
                f"| {cost[name]} | {_cell('; '.join(r['errors']))} |"
            )
        lines.append("")
    lines += [
        f"## Planted slowdown: RMSNorm {PLANTED_ROWS[1]} rows (B) vs {PLANTED_ROWS[0]} (A), and A vs A",
        "",
        "Verdicts of B relative to A (fusiondiff's `compare_timing`): on one measurement's raw samples, "
        f"on the {meta['repeats']} repeated figures, and 'natural' (two single figures, 2 % floor). "
        "Expected: SLOWER for B, SAME for A again.",
        "",
        "| method | B/A | slowdown: samples | repeats | natural | A/A | identical: samples | repeats | natural |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for method, p in summary["planted"].items():
        if "error" in p:
            lines.append(f"| {method} | {_cell(p['error'])} | | | | | | | |")
            continue
        lines.append(
            f"| {method} | {p['b_over_a']:.4f} | {p['slowdown_samples']} | {p['slowdown_repeats']} "
            f"| {p['slowdown_natural']} | {p['a2_over_a']:.4f} | {p['identical_samples']} "
            f"| {p['identical_repeats']} | {p['identical_natural']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", nargs="?", help="writes OUTPUT.json and OUTPUT.md")
    parser.add_argument("--fusions", type=int, default=5, help="first N forward fusions (default 5)")
    parser.add_argument("--layers", type=int, default=3, help="layers of the seed model (default 3)")
    parser.add_argument("--repeats", type=int, default=5, help="measurements per method and fusion (default 5)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per child process (default 300)")
    parser.add_argument("--child", choices=("live", "replay"), help=argparse.SUPPRESS)
    parser.add_argument("--group", choices=tuple(GROUPS), help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    parser.add_argument(
        "--render",
        metavar="JSON",
        help="no measuring: summarize an earlier run's OUTPUT.json again and rewrite it and its .md (CPU)",
    )
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    if args.render:
        saved = json.loads(Path(args.render).read_text())
        saved["summary"] = summarize(saved["runs"])
        saved["overview"] = overview(saved["summary"])
        Path(args.render).write_text(json.dumps(saved, indent=1))
        Path(args.render).with_suffix(".md").write_text(markdown(saved["summary"], saved["meta"]))
        print(markdown(saved["summary"], saved["meta"]))
        return
    if not args.output:
        parser.error("OUTPUT is required")
    if args.fusions < 1 or args.repeats < 2:
        parser.error("--fusions must be at least 1 and --repeats at least 2")
    output = Path(args.output)
    workdir = output.parent / (output.name + ".work")
    workdir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    runs: dict[str, Any] = {}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    # the torch group's live child saves the fusions the replay children rebuild
    for side, group in (("live", "torch"), ("live", "nvfuser"), ("replay", "torch"), ("replay", "nvfuser")):
        print(f"bench_timing_methods: {side} {group} ...", file=sys.stderr, flush=True)
        command = [sys.executable, __file__, "--child", side, "--group", group, "--workdir", str(workdir)]
        command += ["--fusions", str(args.fusions), "--layers", str(args.layers), "--repeats", str(args.repeats)]
        began = time.perf_counter()
        try:
            done = subprocess.run(command, env=env, timeout=args.timeout, capture_output=True, text=True)
            failure = None if done.returncode == 0 else f"exit {done.returncode}: {done.stderr[-2000:]}"
        except subprocess.TimeoutExpired:
            failure = f"timed out after {args.timeout:.0f} s"
        result_file = workdir / f"{side}-{group}.json"
        if failure is None and result_file.exists():
            runs[f"{side}-{group}"] = json.loads(result_file.read_text())
        else:
            runs[f"{side}-{group}"] = {"error": failure or "no result file"}
            print(f"bench_timing_methods: {side} {group} failed: {failure}", file=sys.stderr)
        runs[f"{side}-{group}"]["wall_s"] = time.perf_counter() - began
    live_defs = runs.get("live-torch", {}).get("definitions")
    other_defs = runs.get("live-nvfuser", {}).get("definitions")
    meta = {
        "fusions": args.fusions,
        "layers": args.layers,
        "repeats": args.repeats,
        "samples": SAMPLES,
        "warmup": WARMUP,
        "kerneltime_options": KERNELTIME_OPTIONS,
        "live_children_saw_same_definitions": live_defs == other_defs if live_defs and other_defs else None,
        "wall_s": time.perf_counter() - start,
    }
    summary = summarize(runs)
    record = {"meta": meta, "summary": summary, "overview": overview(summary), "runs": runs}
    Path(f"{output}.json").write_text(json.dumps(record, indent=1))
    Path(f"{output}.md").write_text(markdown(summary, meta))
    print(markdown(summary, meta))


if __name__ == "__main__":
    main()
