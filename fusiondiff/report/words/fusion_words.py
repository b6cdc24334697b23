"""The words for the findings about a fusion and what nvFuser made of it
(:mod:`fusiondiff.diff.rules_fusion`), and for ``unexplained`` (:mod:`fusiondiff.diff.findings`):
a title and evidence lines from each finding's data, units chosen here."""

from __future__ import annotations

from collections.abc import Callable

from fusiondiff.diff.records import Evidence, Finding
from fusiondiff.records.units import duration, durations
from fusiondiff.report.words.shown import by_field, dims, items, label, limited, ns, show

Words = tuple[str, list[str]]
"""A finding's title and its evidence lines."""

_OPTIONS_NOTE = "options are not part of nvFuser's cache key, and its repro script drops them"
_PRINT_NOTE = "nvFuser prints doubles with 6 significant digits: a script built from the print runs rounded values"
_CASTS_NOTE = (
    "the two printed definitions are one fusion but differ in casts that nvFuser's printer adds "
    "when a printed definition is rebuilt (to Index, or to a value's own dtype); nvFuser compiles "
    "them as extra conversions (e.g. __to_index), which is enough to change the source"
)
_REUSE_NOTE = (
    "a runtime index above 0 means the process compiled other runtimes of this fusion "
    "before (other inputs) and nvFuser picked among them by history; "
    "NVFUSER_DISABLE=kernel_reuse on both sides rules reuse out"
)
_UNEXPLAINED_NOTE = (
    "no recorded property differs: look at the machine and process state (other work on "
    "the GPU, clocks, power limits) and repeat both captures"
)


def _definition(f: Finding) -> Words:
    h = by_field(f.data)["structure_hash"]
    lines = [f"definition hash {str(h.a)[:12]} in A, {str(h.b)[:12]} in B; ops that differ (- A, + B):"]
    diff = [f"  {e.subject}" for e in f.data if e.field == "definition_diff"]
    lines += limited(diff) if diff else ["  (only whitespace or line order)"]
    return f"{label(f.fusions)} runs another definition", lines


def _ran(printer: str, exact: object) -> str:
    if isinstance(exact, (list, tuple)) and exact:
        return f"{printer} ran with {show(list(exact))}"
    return f"{printer} records no exact constants"


def _constant_precision(f: Finding) -> Words:
    exact = by_field(f.data)["exact_constants"]
    lines = [
        f"A's constant {e.a} is printed as {e.b} in B's definition ({_ran('B', exact.b)})"
        for e in f.data
        if e.field == "rounded_in_b"
    ]
    lines += [
        f"B's constant {e.b} is printed as {e.a} in A's definition ({_ran('A', exact.a)})"
        for e in f.data
        if e.field == "rounded_in_a"
    ]
    if not lines:
        lines.append(f"exact constants: {show(sorted(items(exact.a)))} in A, {show(sorted(items(exact.b)))} in B")
    lines.append(_PRINT_NOTE)
    return f"{label(f.fusions)} uses constants of another precision", lines


def _options(f: Finding) -> Words:
    lines = [f"{e.field}: {show(e.a)} in A, {show(e.b)} in B" for e in f.data]
    return f"{label(f.fusions)} runs with other enable/disable options", [*lines, _OPTIONS_NOTE]


def _segmentation(f: Finding) -> Words:
    e = by_field(f.data)
    schedulers, kernels = e["schedulers"], e["kernels"]
    a = "+".join(items(schedulers.a)) or "-"
    b = "+".join(items(schedulers.b)) or "-"
    lines = [f"segments: {a} in A ({show(kernels.a)} kernel(s)), {b} in B ({show(kernels.b)} kernel(s))"]
    only = [x for x in f.data if x.field in ("kernel_only_in_a", "kernel_only_in_b")]
    lines += limited(
        [
            f"only in {x.field[-1].upper()}: {x.subject} ({duration(ns(x.a if x.field.endswith('a') else x.b))} median)"
            for x in only
        ]
    )
    return f"{label(f.fusions)} is segmented differently", lines


def _by_kernel(data: tuple[Evidence, ...]) -> dict[str | None, list[Evidence]]:
    """Each kernel's evidence (the kernel as ``subject``), in order."""
    kernels: dict[str | None, list[Evidence]] = {}
    for e in data:
        kernels.setdefault(e.subject, []).append(e)
    return kernels


def _kernel_variant(f: Finding) -> Words:
    lines = []
    for kernel, data in _by_kernel(f.data).items():
        parts = ", ".join(
            f"{e.field.removeprefix('launch.')} {dims(e.a)} -> {dims(e.b)}" for e in data if e.field != "median_ns"
        )
        median = next(e for e in data if e.field == "median_ns")
        median_a, median_b = durations(ns(median.a), ns(median.b))
        lines.append(f"{kernel}: {parts} ({median_a} -> {median_b})")
    return f"{label(f.fusions)} launches another kernel variant (launch configuration)", limited(lines)


def _cuda_source(f: Finding) -> Words:
    lines = [
        f"{e.subject}: source sha256 {show(e.a)[:12]} in A, {show(e.b)[:12]} in B"
        for e in f.data
        if e.field == "source_hash"
    ]
    lines += [_CASTS_NOTE for e in f.data if e.field == "printer_casts"]
    return f"{label(f.fusions)} compiled other CUDA source", limited(lines)


def _runtime_reuse(f: Finding) -> Words:
    lines = []
    for kernel, data in _by_kernel(f.data).items():
        e = by_field(data)
        c, r, name = e["concretization"], e["runtime"], e["launched_name"]
        lines.append(f"{kernel}: c{show(c.a)}_r{show(r.a)} in A, c{show(c.b)}_r{show(r.b)} in B ({name.a} vs {name.b})")
    return f"{label(f.fusions)} kernels come from another runtime cache history", [*limited(lines), _REUSE_NOTE]


def _unexplained(f: Finding) -> Words:
    e = by_field(f.data)
    median, verdict = e["fusion_median_ns"], e["verdict"]
    direction = str(verdict.a)
    median_a, median_b = durations(ns(median.a), ns(median.b))
    lines = [f"fusion {direction.lower()} in B: {median_a} in A, {median_b} in B ({verdict.subject})"]
    kernels = {
        k: by_field(data)
        for k, data in _by_kernel(f.data).items()
        if k is not None and any(x.field == "kernel_verdict" for x in data)
    }
    lines += limited(
        [
            "{} {} in B: {} in A, {} in B".format(
                name,
                str(k["kernel_verdict"].a).lower(),
                *durations(ns(k["kernel_median_ns"].a), ns(k["kernel_median_ns"].b)),
            )
            for name, k in kernels.items()
        ]
    )
    lines.append(_UNEXPLAINED_NOTE)
    pair = label(f.fusions)
    if direction in ("FASTER", "SLOWER"):
        title = f"{pair} differs in time, and nothing recorded explains it"
    else:
        title = f"{', '.join(kernels)} of {pair} differ(s) in time inside a fusion of the same speed; nothing recorded explains it"
    return title, lines


WORDS: dict[str, Callable[[Finding], Words]] = {
    "definition": _definition,
    "constant_precision": _constant_precision,
    "options": _options,
    "segmentation": _segmentation,
    "kernel_variant": _kernel_variant,
    "cuda_source": _cuda_source,
    "runtime_reuse": _runtime_reuse,
    "unexplained": _unexplained,
}
"""Each rule's words: its finding's title and evidence lines."""
