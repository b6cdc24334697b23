"""The words for the findings about how and where the captures were taken
(:mod:`fusiondiff.diff.rules_setup`): a title and evidence lines from each finding's data."""

from __future__ import annotations

from collections.abc import Callable

from fusiondiff.diff.records import Evidence, Finding
from fusiondiff.diff.speed_of_light import PEAK_FIELDS
from fusiondiff.diff.stats import MIN_SAMPLES
from fusiondiff.records.environment import RUNTIME_VARIABLES
from fusiondiff.records.gates import HOST, KERNEL
from fusiondiff.records.model import SEED_METHOD
from fusiondiff.report.views import speed_of_light_view
from fusiondiff.report.words.shown import by_field, limited, mib, on_side, show, side_of

Words = tuple[str, list[str]]

_ENV_NOTE = "NVFUSER_* variables change what nvFuser compiles for every fusion of the process"


def _env_vars(f: Finding) -> Words:
    names = [e.field.removeprefix("nvfuser_env.") for e in f.data]
    lines = [f"{name}: {show(e.a)} in A, {show(e.b)} in B" for name, e in zip(names, f.data)]
    return f"NVFUSER_* variables differ ({', '.join(names)})", [*lines, _ENV_NOTE]


def _runtime_env(f: Finding) -> Words:
    names = [e.field.removeprefix("runtime_env.") for e in f.data]
    known = {v.name: v for v in RUNTIME_VARIABLES}
    lines = []
    for name, e in zip(names, f.data):
        v = known.get(name)
        changes = " and ".join(q for q, on in ((KERNEL, v and v.kernel), (HOST, v and v.host)) if on)
        what = f": {v.what} (changes {changes} time)" if v is not None and changes else ""
        lines.append(f"{name}: {show(e.a)} in A, {show(e.b)} in B{what}")
    return f"Variables that change how CUDA or PyTorch runs differ ({', '.join(names)})", lines


def _l2_mode(f: Finding) -> Words:
    e = by_field(f.data)
    lines = [
        f"L2 mode: {e['l2_mode'].a} in A, {e['l2_mode'].b} in B "
        "(cold: L2 flushed before each sample; warm: samples back to back)"
    ]
    l2 = e["l2_bytes"].on("A") or e["l2_bytes"].on("B")
    for x in f.data:
        if x.field != "input_bytes":
            continue
        working_set = x.on("A") or 0.0
        if not l2:
            fit = "L2 size not recorded"
        elif working_set <= l2:
            fit = f"fits in L2 ({mib(l2)}): warm samples read inputs from L2, cold ones from memory"
        else:
            fit = f"exceeds L2 ({mib(l2)}): the mode matters less for this fusion"
        lines.append(f"{x.subject}: inputs {mib(working_set)}, {fit}")
    return "The captures were timed with a different L2 mode", lines


def _method_difference(a: object, b: object) -> str:
    """What two timing methods measure differently. The seed issue's method sums every profiler
    event of one call; kineto and nvfuser both time each kernel through CUPTI, sample by sample."""
    if SEED_METHOD in (a, b):
        return "the seed's method sums every profiler event of one call, which is not a sum of kernel times"
    return "both time kernels through CUPTI, but each records its own samples in its own process"


def _capture_line(e: Evidence) -> str:
    if e.field == "protocol.method":
        return f"timing method: {e.a} in A, {e.b} in B: {_method_difference(e.a, e.b)}"
    if e.field.startswith("protocol."):
        return f"protocol {e.field.removeprefix('protocol.')}: {show(e.a)} in A, {show(e.b)} in B"
    if e.field == "timed_sm_clock_mhz":
        return f"SM clock while timing: {e.on('A') or 0:.0f} MHz in A, {e.on('B') or 0:.0f} MHz in B"
    if e.field == "capture_warning":
        return f"{side_of(e)}'s capture warns: {on_side(e)}"
    return f"{e.field}: {show(e.a)} MHz in A, {show(e.b)} MHz in B"


def _fusion_line(e: Evidence) -> str:
    side, value = side_of(e), on_side(e)
    if e.field == "samples":
        issue = f"{show(value)} sample(s) in {side}, fewer than {MIN_SAMPLES}"
    elif e.field == "zero_samples":
        issue = f"every sample in {side} is 0 ns: the profiler recorded no kernel events"
    elif e.field == "sm_clock_moved_mhz" and isinstance(value, (list, tuple)):
        issue = f"SM clock moved between {show(value[0])} and {show(value[1])} MHz during {side}'s samples"
    else:
        issue = f"{side} warns: {value}"
    return f"{e.subject}: {issue}"


def _measurement(f: Finding) -> Words:
    capture = [_capture_line(e) for e in f.data if e.subject is None]
    lines = capture + limited([_fusion_line(e) for e in f.data if e.subject is not None])
    if capture:
        return "The two captures were not measured like for like", lines
    return "Some timings are too weak to compare", lines


def _each(f: Finding) -> list[str]:
    return [f"{e.subject + ' ' if e.subject else ''}{e.field}: {show(e.a)} in A, {show(e.b)} in B" for e in f.data]


def _gpu(f: Finding) -> Words:
    data = [x for x in f.data if x.field not in PEAK_FIELDS]  # the peaks' evidence: speed_of_light_view's words
    e = by_field(data)
    name = e.get("gpu_name")
    launched, matched = e.get("kernels_launched_otherwise"), e.get("kernels_matched")
    lines = [
        f"{x.field}: {show(x.a)} in A, {show(x.b)} in B"
        for x in data
        if x.subject is None and x.field not in ("kernels_launched_otherwise", "kernels_matched")
    ]
    launches = [f"{x.subject}: {x.field} {show(x.a)} -> {show(x.b)}" for x in data if x.subject is not None]
    if launched is not None and matched is not None:
        lines.append(
            f"nvFuser launched {show(launched.a)} of {show(matched.a)} matched kernel(s) with another configuration "
            f"there (its heuristics read the GPU){':' if launches else ''}"
        )
    lines += limited(launches)
    lines += speed_of_light_view.evidence_lines([x for x in f.data if x.field in PEAK_FIELDS])
    if name is None:
        return "The fusions ran on another device", lines
    return f"Another GPU: {show(name.a)} in A, {show(name.b)} in B", lines


def _versions(f: Finding) -> Words:
    names = [e.field.removesuffix("_version") for e in f.data]
    return f"Other software versions ({', '.join(names)})", _each(f)


def _flush_size(f: Finding) -> Words:
    e = by_field(f.data)
    flush, l2 = e["protocol.flush_bytes"], e["l2_bytes"]

    def size(value: object) -> str:  # 0: a file that did not record it
        return mib(float(value)) if isinstance(value, (int, float)) and value > 0 else "not recorded"

    lines = [
        f"L2 flush buffer: {size(flush.a)} in A, {size(flush.b)} in B (the protocol makes it twice the GPU's L2)",
        f"L2: {size(l2.a)} in A, {size(l2.b)} in B",
    ]
    return "The L2 flush buffer differs in size", lines


def _clocks(f: Finding) -> Words:
    lines = [_capture_line(e) for e in f.data if e.subject is None]
    return "The clocks differ", lines + limited([_fusion_line(e) for e in f.data if e.subject is not None])


WORDS: dict[str, Callable[[Finding], Words]] = {
    "env_vars": _env_vars,
    "runtime_env": _runtime_env,
    "l2_mode": _l2_mode,
    "measurement": _measurement,
    "gpu": _gpu,
    "versions": _versions,
    "flush_size": _flush_size,
    "clocks": _clocks,
}
"""Each rule's words: its finding's title and evidence lines."""
