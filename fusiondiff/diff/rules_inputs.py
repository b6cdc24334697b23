"""Rules about the fusion's inputs: what nvFuser's cache key and heuristics see of them.

Policy when a tensor's storage offset and its alignment both change: ``storage_offset`` is reported
as the cause, with the alignment and its vectorization consequence in its evidence, and
``input_alignment`` stays silent for that input. The offset is what the user can act on (nvFuser's
repro script drops it; a faithful repro keeps it); the alignment is how it bites. ``input_alignment``
fires alone when the pointer alignment changed at the same offset (another allocator, a view of a
shifted buffer).

Strides are reported by ``input_strides`` only when the shape is the same: a new shape brings new
strides, and ``dtype_shape`` already says so.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator

from fusiondiff.diff.compare import itemsize_bytes
from fusiondiff.diff.context import RuleContext, fusion_gap_ns, make_finding, show
from fusiondiff.diff.records import Finding, FusionPair, PropertyChange
from fusiondiff.model import TensorMeta

VECTOR_BYTES = 16
"""Widest vectorized global access nvFuser emits (16 B); alignment below it narrows the vectors."""
_INT32_MAX = 2**31 - 1
_INPUT_PATH = re.compile(r"^inputs\[(\d+)\](?:\.(\w+))?$")


def _input_changes(pair: FusionPair) -> dict[int, dict[str, PropertyChange]]:
    """Input changes of a pair by input index and field (``""`` for an input added or removed)."""
    by_input: dict[int, dict[str, PropertyChange]] = defaultdict(dict)
    for change in pair.changes:
        match = _INPUT_PATH.match(change.path) if change.category == "inputs" else None
        if match:
            by_input[int(match[1])][match[2] or ""] = change
    return by_input


def _describe(meta: TensorMeta | None) -> str:
    if meta is None:
        return "absent"
    if meta.kind == "scalar":
        return f"scalar {meta.dtype}"
    return f"{meta.dtype.removeprefix('torch.')}{list(meta.shape)}"


def _meta(ctx: RuleContext, pair: FusionPair, index: int) -> TensorMeta | None:
    inputs = ctx.fusion_a(pair).inputs
    if index >= len(inputs):
        inputs = ctx.fusion_b(pair).inputs
    return inputs[index] if index < len(inputs) else None


def _vector_width(alignment: object, dtype: str) -> str:
    size = itemsize_bytes(dtype)
    if not isinstance(alignment, int) or not size or alignment <= 0:
        return "unknown"
    return f"{max(min(alignment, VECTOR_BYTES) // size, 1)} element(s)"


def _alignment_lines(change: PropertyChange, meta: TensorMeta | None) -> list[str]:
    dtype = meta.dtype if meta else ""
    lines = [
        f"data pointer alignment: {show(change.a)} B in A, {show(change.b)} B in B "
        f"(widest vector access: {_vector_width(change.a, dtype)} in A, {_vector_width(change.b, dtype)} in B)"
    ]
    known = [v for v in (change.a, change.b) if isinstance(v, int)]
    if known and min(known) < VECTOR_BYTES:
        lines.append(
            f"below {VECTOR_BYTES} B nvFuser cannot use its widest vector loads for this input, and "
            f"the alignment is part of its input cache key: another kernel variant follows"
        )
    return lines


def _input_finding(pair: FusionPair, rule: str, title: str, lines: list[str]) -> Finding:
    return make_finding(rule, "cause", title, lines, [pair.label], fusion_gap_ns(pair))


def storage_offset(ctx: RuleContext) -> Iterator[Finding]:
    """A tensor input starts at another storage offset (alignment, if it changed, in evidence)."""
    for pair in ctx.pairs:
        for index, fields in sorted(_input_changes(pair).items()):
            change = fields.get("storage_offset")
            if change is None:
                continue
            meta = _meta(ctx, pair, index)
            lines = [
                f"input {index} ({_describe(meta)}): storage offset {show(change.a)} element(s) in A, "
                f"{show(change.b)} in B",
                "nvFuser's own repro script builds fresh tensors at offset 0: the offset is lost there",
            ]
            alignment = fields.get("alignment_bytes")
            if alignment is not None:
                lines[1:1] = _alignment_lines(alignment, meta)
            extra = f" (alignment {show(alignment.a)} B vs {show(alignment.b)} B)" if alignment else ""
            title = f"Input {index} of {pair.label} starts at another storage offset{extra}"
            yield _input_finding(pair, "storage_offset", title, lines)


def input_alignment(ctx: RuleContext) -> Iterator[Finding]:
    """A tensor input's data pointer alignment differs at the same storage offset."""
    for pair in ctx.pairs:
        for index, fields in sorted(_input_changes(pair).items()):
            change = fields.get("alignment_bytes")
            if change is None or "storage_offset" in fields:
                continue
            meta = _meta(ctx, pair, index)
            lines = [f"input {index} ({_describe(meta)})", *_alignment_lines(change, meta)]
            title = f"Input {index} of {pair.label} is aligned to {show(change.a)} B in A, {show(change.b)} B in B"
            yield _input_finding(pair, "input_alignment", title, lines)


def input_strides(ctx: RuleContext) -> Iterator[Finding]:
    """Same shape, other strides or contiguity: another memory layout, another schedule."""
    for pair in ctx.pairs:
        for index, fields in sorted(_input_changes(pair).items()):
            layout = [fields[f] for f in ("stride", "is_contiguous") if f in fields]
            if not layout or "shape" in fields:
                continue
            lines = [f"input {index} ({_describe(_meta(ctx, pair, index))})"]
            lines += [f"{c.path.split('.')[-1]}: {show(c.a)} in A, {show(c.b)} in B" for c in layout]
            lines.append("strides decide the stride order nvFuser schedules for, and whether loads coalesce")
            title = f"Input {index} of {pair.label} has another memory layout (strides)"
            yield _input_finding(pair, "input_strides", title, lines)


def dtype_shape(ctx: RuleContext) -> Iterator[Finding]:
    """An input has another dtype, shape or kind, or the input count differs."""
    for pair in ctx.pairs:
        lines = []
        for index, fields in sorted(_input_changes(pair).items()):
            if "" in fields:
                change = fields[""]
                side = "A" if change.b is None else "B"
                lines.append(f"input {index} exists only in {side}")
                continue
            for name in ("kind", "dtype", "shape"):
                if name in fields:
                    c = fields[name]
                    lines.append(f"input {index} {name}: {show(c.a)} in A, {show(c.b)} in B")
        if lines:
            lines.append("sizes and dtypes select the scheduler heuristics, the index type and the kernel")
            title = f"Inputs of {pair.label} differ in dtype, shape or count"
            yield _input_finding(pair, "dtype_shape", title, lines)


def index_value_range(ctx: RuleContext) -> Iterator[Finding]:
    """Integer (index) inputs hold another range of values."""
    for pair in ctx.pairs:
        for index, fields in sorted(_input_changes(pair).items()):
            if "min_value" not in fields and "max_value" not in fields:
                continue
            meta = _meta(ctx, pair, index)
            fa, fb = ctx.fusion_a(pair), ctx.fusion_b(pair)
            low_a, high_a = _range(fa.inputs, index)
            low_b, high_b = _range(fb.inputs, index)
            lines = [
                f"input {index} ({_describe(meta)}): values [{show(low_a)}, {show(high_a)}] in A, "
                f"[{show(low_b)}, {show(high_b)}] in B",
                "index values decide which rows a gather touches (cache reuse, memory traffic)",
            ]
            if any(isinstance(v, (int, float)) and v > _INT32_MAX for v in (high_a, high_b)):
                lines.append("one side holds values beyond int32: 64-bit index arithmetic")
            title = f"Index input {index} of {pair.label} holds another range of values"
            yield _input_finding(pair, "index_value_range", title, lines)


def _range(inputs: tuple[TensorMeta, ...], index: int) -> tuple[float | None, float | None]:
    if index >= len(inputs):
        return None, None
    return inputs[index].min_value, inputs[index].max_value


def scalar_value(ctx: RuleContext) -> Iterator[Finding]:
    """A scalar input has another value."""
    for pair in ctx.pairs:
        for index, fields in sorted(_input_changes(pair).items()):
            change = fields.get("scalar_value")
            if change is None:
                continue
            lines = [
                f"input {index} ({_describe(_meta(ctx, pair, index))}): {show(change.a)} in A, {show(change.b)} in B"
            ]
            title = f"Scalar input {index} of {pair.label} has another value"
            yield _input_finding(pair, "scalar_value", title, lines)
