"""Property comparison: every recorded property of two paired fusions (and of the two captures'
environments and protocols), as :class:`PropertyChange` records.

The comparison itself is a walk over the ``to_jsonable`` form of what is compared (a number equal
to the same number of another numeric type). What is left out, and why:

- timing samples and their summaries: :mod:`fusiondiff.diff.stats` compares those;
- raw kernel names: their ``f/c/r`` parts count what the process compiled before (history), so they
  are compared by the ``runtime_reuse`` rule, and kernels are paired by normalized name;
- fusion names, traces, call counts, repro scripts, Thunder op summaries and CUDA source texts:
  they describe how a fusion was reached or are large derived text (``source_hash`` stands for
  the source);
- tensor keys, storage sizes and devices of inputs: file bookkeeping, not what nvFuser sees;
- hostname, recording time and fusiondiff version of the environment, and a rank's place in a
  torchrun session (rank, local rank, world size, current device, process group backend);
- the GPU's measured DRAM peak (``peak_bandwidth``): a measurement, which two captures on one GPU
  never repeat to the last digit; the ``gpu`` rule reads it
  (:mod:`fusiondiff.diff.speed_of_light`);
- a property unknown on one side (``None``: a cluster Kineto does not report, a source hash that
  was not read) is not a difference;
- what a fusion's timing ran beside (``conditions``: other work, NVML's window, host times) and its
  block-level timeline: measurements, not properties; ``rules_environment`` and ``rules_blocks``
  compare them.

The walk runs per record, only on records that differ, memoised per diff (:class:`RecordComparer`);
fields that hold text or sequences of text are compared as values.
"""

from __future__ import annotations

import difflib
import functools
import math
import operator
import re
from collections.abc import Iterable, Sequence
from typing import Any

from fusiondiff.diff.records import Category, PropertyChange
from fusiondiff.records.codec import to_jsonable
from fusiondiff.records.dtypes import itemsize_bytes
from fusiondiff.records.model import Capture, FusionRecord, KernelRecord

INPUT_FIELDS = (
    "kind",
    "dtype",
    "shape",
    "stride",
    "storage_offset",
    "alignment_bytes",
    "is_contiguous",
    "min_value",
    "max_value",
    "scalar_value",
)
"""The input properties compared: what nvFuser's cache key, scheduler heuristics or index math see."""

LAUNCH_FIELDS = (
    "grid",
    "block",
    "cluster",
    "shared_mem_bytes",
    "dynamic_smem_bytes",
    "static_smem_bytes",
    "registers_per_thread",
)

CLOCK_FIELDS = ("sm_clock_mhz", "max_sm_clock_mhz", "memory_clock_mhz")
_ENVIRONMENT_IGNORED = (
    "hostname",
    "recorded_at",
    "fusiondiff_version",
    "nvfuser_env",
    "runtime_env",
    # A process's place in a torchrun session: two ranks of one session always differ in these,
    # and so may a live rank and its single-process replay. They say where a capture ran, not
    # what nvFuser ran; another GPU model still shows in gpu_name, clocks in CLOCK_FIELDS.
    "rank",
    "local_rank",
    "world_size",
    "cuda_device_index",
    "distributed_backend",
    # measured, not a property: it differs between any two captures (diff.speed_of_light reads it)
    "peak_bandwidth",
)

_input_values = operator.attrgetter(*INPUT_FIELDS)

_FUSION_CATEGORIES: dict[str, Category] = {
    "definition_hash": "definition",
    "exact_constants": "constants",
    "enable_options": "options",
    "disable_options": "options",
    "segmentation": "segmentation",
    "device_index": "environment",
}


def _deep_changes(view_a: Any, view_b: Any, path: tuple[Any, ...] = ()) -> Iterable[list[Any]]:
    """Paths (as key lists, two keys deep at most: what the callers keep) of every difference
    between two JSON-able views, in A's key order, a key of one side only included (two objects
    that share too few keys are one difference, :func:`_apart`). Equal as
    Python compares: a number is equal to the same number of another numeric type (``1``, ``1.0``,
    ``True``), as DeepDiff's ``ignore_numeric_type_changes`` had it."""
    if view_a == view_b:
        return
    if isinstance(view_a, dict) and isinstance(view_b, dict) and len(path) < 2 and not _apart(view_a, view_b):
        for key in [*view_a, *(k for k in view_b if k not in view_a)]:
            if key in view_a and key in view_b:
                yield from _deep_changes(view_a[key], view_b[key], (*path, key))
            else:
                yield [*path, key]
        return
    yield list(path)


_SHARED_KEYS = 0.33
"""Below this share of their keys in common, two objects differ as a whole (DeepDiff's default
``threshold_to_diff_deeper``, which the comparison followed)."""


def _apart(a: dict[Any, Any], b: dict[Any, Any]) -> bool:
    """Two objects with more than one key between them, under :data:`_SHARED_KEYS` of them shared."""
    union = len(a.keys() | b.keys())
    return union > 1 and len(a.keys() & b.keys()) / union < _SHARED_KEYS


def _lookup(view: Any, path: Sequence[Any]) -> Any:
    for key in path:
        try:
            view = view[key]
        except (KeyError, IndexError, TypeError):
            return None
    return view


Record = tuple[tuple[str, Any], ...]
"""A flat record view: ``(field, value)`` pairs, hashable so the answers can be memoised."""


def _known(a: Any, b: Any, fields: Sequence[str]) -> tuple[Record, Record]:
    """Fields both records know (``None`` means the source did not say: not a difference)."""
    view_a, view_b = [], []
    for name in fields:
        va, vb = getattr(a, name), getattr(b, name)
        if va is not None and vb is not None:
            view_a.append((name, va))
            view_b.append((name, vb))
    return tuple(view_a), tuple(view_b)


def _fusion_properties(f: FusionRecord) -> Record:
    return (
        ("definition_hash", f.structure_hash),
        ("exact_constants", f.exact_constants),
        # Options are sets: the order they were passed in does not matter to nvFuser.
        ("enable_options", tuple(sorted(f.enable_options))),
        ("disable_options", tuple(sorted(f.disable_options))),
        ("segmentation", f.segmentation.schedulers),
        ("device_index", f.device_index),
    )


def _same_properties(a: FusionRecord, b: FusionRecord) -> bool:
    """The recorded fields :func:`_fusion_properties` reads are equal on both sides, so its views
    are (the common case, decided without sorting options or segments); where they are not, the
    views may still be (options in another order)."""
    return (
        a.structure_hash == b.structure_hash
        and a.exact_constants == b.exact_constants
        and a.enable_options == b.enable_options
        and a.disable_options == b.disable_options
        and a.device_index == b.device_index
        and a.segmentation.schedulers == b.segmentation.schedulers
    )


def _is_text(value: Any) -> bool:
    """Text, or a list or tuple of texts only."""
    if isinstance(value, str):
        return True
    return isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value)


def _changed_fields(view_a: Record, view_b: Record) -> tuple[str, ...]:
    """The fields that differ between two flat views of the same fields, in field order (see
    :meth:`RecordComparer.changed_fields`)."""
    values_b = dict(view_b)
    changed = set()
    deep_a: dict[str, Any] = {}
    deep_b: dict[str, Any] = {}
    for name, value_a in view_a:
        value_b = values_b[name]
        if _is_text(value_a) and _is_text(value_b):
            if to_jsonable(value_a) != to_jsonable(value_b):
                changed.add(name)
        else:
            deep_a[name], deep_b[name] = value_a, value_b
    if deep_a:
        paths = _deep_changes(to_jsonable(deep_a), to_jsonable(deep_b))
        changed.update(str(path[0]) for path in paths)
    return tuple(name for name, _ in view_a if name in changed)


class RecordComparer:
    """Compares paired fusions and kernels record by record.

    The walk runs per record (the fusion's own properties, each input, each kernel's launch
    configuration), only where a cheap equality check says the records differ, and its answers
    are memoised for the life of the comparer (one diff): the same layouts and launch
    configurations repeat across kernels and across the identical fusions of a model's layers."""

    def __init__(self) -> None:
        self._memo: dict[tuple[Record, Record], tuple[str, ...]] = {}

    def changed_fields(self, view_a: Record, view_b: Record) -> tuple[str, ...]:
        """The fields that differ between two flat record views, in field order.

        A field whose value is text or a sequence of texts on both sides (a segmentation's
        schedulers, exact constants, options) differs exactly when the values are unequal (never
        aligned item by item: a fusion of 20,000 segments took minutes so). The other fields are
        walked together."""
        key = (view_a, view_b)
        if key not in self._memo:
            self._memo[key] = _changed_fields(view_a, view_b)
        return self._memo[key]

    def _changes(
        self,
        prefix: str,
        view_a: Record,
        view_b: Record,
        category: Category | dict[str, Category],
        kernel: str | None = None,
        input_index: int | None = None,
    ) -> list[PropertyChange]:
        values_a, values_b = dict(view_a), dict(view_b)
        return [
            PropertyChange(
                f"{prefix}{name}",
                to_jsonable(values_a.get(name)),
                to_jsonable(values_b.get(name)),
                category if isinstance(category, str) else category[name],
                kernel,
                input_index,
                None if input_index is None else name,
            )
            for name in self.changed_fields(view_a, view_b)
        ]

    def fusion(self, fa: FusionRecord, fb: FusionRecord) -> tuple[PropertyChange, ...]:
        """Fusion-level differences: definition, exact constants, inputs, options, segmentation,
        device. An input's field is reported as a whole (``inputs[0].stride``); an input present
        on one side only as ``inputs[2]`` with ``None`` on the other side."""
        changes: list[PropertyChange] = []
        if not _same_properties(fa, fb):
            props_a, props_b = _fusion_properties(fa), _fusion_properties(fb)
            if props_a != props_b:
                changes += self._changes("", props_a, props_b, _FUSION_CATEGORIES)
        for index in range(max(len(fa.inputs), len(fb.inputs))):
            both = index < len(fa.inputs) and index < len(fb.inputs)
            if both and _input_values(fa.inputs[index]) == _input_values(fb.inputs[index]):
                continue  # the common case, decided before the field views are built
            ta = tuple(zip(INPUT_FIELDS, _input_values(fa.inputs[index]))) if index < len(fa.inputs) else None
            tb = tuple(zip(INPUT_FIELDS, _input_values(fb.inputs[index]))) if index < len(fb.inputs) else None
            if ta == tb:
                continue
            if ta is None or tb is None:
                whole_a = to_jsonable(dict(ta)) if ta else None
                whole_b = to_jsonable(dict(tb)) if tb else None
                changes.append(PropertyChange(f"inputs[{index}]", whole_a, whole_b, "inputs", input_index=index))
            else:
                changes += self._changes(f"inputs[{index}].", ta, tb, "inputs", input_index=index)
        return tuple(changes)

    def kernel(self, ka: KernelRecord, kb: KernelRecord) -> tuple[PropertyChange, ...]:
        """Differences of two matched kernels: launch configuration fields (``launch.block``) and
        the generated source (``source_hash``)."""
        if ka.launch == kb.launch and ka.source_hash == kb.source_hash:
            return ()
        launch_a, launch_b = _known(ka.launch, kb.launch, LAUNCH_FIELDS)
        changes = self._changes("launch.", launch_a, launch_b, "launch", ka.normalized_name)
        source_a, source_b = _known(ka, kb, ("source_hash",))
        return tuple(changes + self._changes("", source_a, source_b, "source", ka.normalized_name))


def compare_captures(a: Capture, b: Capture) -> tuple[PropertyChange, ...]:
    """Capture-level differences: environment, NVFUSER_* variables, the variables that change how
    CUDA and PyTorch run (``runtime_env``), clocks and timing protocol."""
    env_a, env_b = {}, {}
    for name, va in vars(a.environment).items():
        vb = getattr(b.environment, name)
        if name not in _ENVIRONMENT_IGNORED and va is not None and vb is not None:
            env_a[name], env_b[name] = va, vb
    runtime_a, runtime_b = _runtime_views(a.environment.runtime_env, b.environment.runtime_env)
    view_a = to_jsonable(
        {
            "environment": env_a,
            "nvfuser_env": a.environment.nvfuser_env,
            "runtime_env": runtime_a,
            "protocol": a.protocol,
        }
    )
    view_b = to_jsonable(
        {
            "environment": env_b,
            "nvfuser_env": b.environment.nvfuser_env,
            "runtime_env": runtime_b,
            "protocol": b.protocol,
        }
    )
    if view_a == view_b:
        return ()
    changes: dict[str, PropertyChange] = {}
    for path in _deep_changes(view_a, view_b):
        keep = path[:2]
        text = ".".join(map(str, keep[1:] if keep[0] == "environment" else keep))
        if text in changes:
            continue
        if keep[0] == "nvfuser_env":
            category: Category = "env_vars"
        elif keep[0] == "runtime_env":
            category = "runtime_env"
        elif keep[0] == "protocol":
            category = "protocol"
        else:
            category = "clocks" if keep[1] in CLOCK_FIELDS else "environment"
        changes[text] = PropertyChange(text, _lookup(view_a, keep), _lookup(view_b, keep), category)
    return tuple(changes.values())


def _runtime_views(a: dict[str, str] | None, b: dict[str, str] | None) -> tuple[dict[str, str], dict[str, str]]:
    """The runtime variables as compared: none where a side did not record them (a capture
    written before they were read), so that "not recorded" never reads as "not set"."""
    return ({}, {}) if a is None or b is None else (a, b)


def definition_diff(definition_a: str, definition_b: str) -> tuple[str, ...]:
    """Op-level diff of two printed definitions: ``-`` lines only in A, ``+`` lines only in B."""
    lines_a = [line.strip() for line in definition_a.splitlines() if line.strip()]
    lines_b = [line.strip() for line in definition_b.splitlines() if line.strip()]
    diff = difflib.unified_diff(lines_a, lines_b, lineterm="", n=0)
    return tuple(line for line in diff if not line.startswith(("---", "+++", "@@")))


_FLOAT_LITERAL = re.compile(r"(?<![\w.])-?\d+\.\d+(?:[eE][-+]?\d+)?(?![\w.])")
"""A double as nvFuser's printer writes it (``1.00000e-05``, ``-0.5``: digits, a point, digits, an
exponent maybe), searched for in the printed text, its sign with it: :func:`lossy_constants`
compares signed values, and the text need not be Python a tokenizer accepts. Not
:data:`fusiondiff.replay.rebuild._FLOAT_LITERAL`, which classifies tokens Python's tokenizer has
already cut out (any decimal form, ``1.`` or ``.5``, and no sign: that is a token of its own)."""


@functools.lru_cache(maxsize=4_096)
def _float_literals(printed_definition: str) -> frozenset[str]:
    """The floating-point literals of a printed definition (both sides of a diff often print the same)."""
    return frozenset(_FLOAT_LITERAL.findall(printed_definition))


def _as_float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return None if math.isnan(value) else value


def rounded_apart(exact_a: Sequence[str], exact_b: Sequence[str]) -> bool:
    """Whether a constant of one side and one of the other are unequal yet the same to 6
    significant digits (one a print's rounding of the other), read from the two constant lists
    alone. A constant only one side lists, with no such partner (``0.0``, listed by a recorder that
    reads the IR's constants and not by one that read Thunder's), is no precision difference."""
    values_a = {v for v in map(_as_float, exact_a) if v is not None}
    values_b = {v for v in map(_as_float, exact_b) if v is not None}
    rounded_b = {float(f"{v:.5e}") for v in values_b - values_a if math.isfinite(v)}
    return any(math.isfinite(v) and float(f"{v:.5e}") in rounded_b for v in values_a - values_b)


def lossy_constants(
    printed_definition: str, exact: Sequence[str], printer_exact: Sequence[str]
) -> list[tuple[str, str]]:
    """Printed literals that are the 6-significant-digit rounding of a more precise constant.

    ``exact`` are one side's full-precision constants, ``printed_definition`` the other side's
    printed definition and ``printer_exact`` that side's own exact constants. nvFuser prints
    doubles with 6 significant digits (``1.00000e-05``), so a script built from the print runs
    another value than the session did. Returns ``(printed literal, exact value)`` pairs; an exact
    value the printing side itself ran with is not reported.
    """
    if not exact:
        return []
    known = {v for v in map(_as_float, printer_exact) if v is not None}
    unknown = []
    for text in exact:
        value = _as_float(text)
        if value is not None and value not in known and not math.isinf(value):
            unknown.append((text, value))
    if not unknown:  # the printing side ran with every exact value: no need to read its print
        return []
    by_value: dict[float, list[str]] = {}  # one look-up per constant: 20,000 of each side stay linear
    for literal in sorted(_float_literals(printed_definition)):
        by_value.setdefault(float(literal), []).append(literal)
    found: list[tuple[str, str]] = []
    for text, value in unknown:
        rounded = float(f"{value:.5e}")
        if rounded != value:
            found.extend((literal, text) for literal in by_value.get(rounded, ()))
    return found


def input_bytes(f: FusionRecord) -> int:
    """Bytes of the fusion's tensor inputs as viewed (their working set), unknown dtypes skipped."""
    total = 0
    for t in f.inputs:
        size = itemsize_bytes(t.dtype) if t.kind == "tensor" else None
        if size is not None:
            total += math.prod(t.shape) * size
    return total
