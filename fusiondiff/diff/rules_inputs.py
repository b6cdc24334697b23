"""Rules about the fusion's inputs: what nvFuser's cache key and heuristics see of them.

Policy when a tensor's storage offset and its alignment both change: ``storage_offset`` is reported
as the cause, with the alignment and its vectorization consequence in its evidence, and
``input_alignment`` stays silent for that input. The offset is what the user can act on (nvFuser's
repro script drops it; a faithful repro keeps it); the alignment is how it bites. ``input_alignment``
fires alone when the pointer alignment changed at the same offset (another allocator, a view of a
shifted buffer).

Strides are reported by ``input_strides`` only when the shape is the same: a new shape brings new
strides, and ``dtype_shape`` already says so.

Each finding's evidence is data, every piece of it with the input's position (``Evidence.index``):
``input``, what the input is (``(kind, dtype, shape)`` as A recorded it, or B where A lacks it), then
the fields of :class:`~fusiondiff.records.model.TensorMeta` that differ by their names, with both values.
The words are :mod:`fusiondiff.report.words.input_words`'.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from fusiondiff.diff.context import RuleContext, make_finding
from fusiondiff.diff.records import Evidence, Finding, FusionPair, PropertyChange, Unit
from fusiondiff.records.dtypes import itemsize_bytes
from fusiondiff.records.model import TensorMeta

VECTOR_BYTES = 16
"""Widest vectorized global access nvFuser emits (16 B); alignment below it narrows the vectors."""
_INT32_MAX = 2**31 - 1


def _input_changes(pair: FusionPair) -> dict[int, dict[str, PropertyChange]]:
    """Input changes of a pair by input index and field (``""`` for an input added or removed)."""
    by_input: dict[int, dict[str, PropertyChange]] = defaultdict(dict)
    for change in pair.changes:
        if change.category == "inputs" and change.input_index is not None:
            by_input[change.input_index][change.attribute or ""] = change
    return by_input


def _changed_inputs(ctx: RuleContext) -> Iterator[tuple[FusionPair, list[tuple[int, dict[str, PropertyChange]]]]]:
    """Each pair whose inputs differ, with its :func:`_input_changes` in input order. A pair
    without changes is passed over at once: six rules ask, and most pairs of a large diff have none."""
    for pair in ctx.pairs:
        if pair.changes and (by_input := _input_changes(pair)):
            yield pair, sorted(by_input.items())


def _described(ctx: RuleContext, pair: FusionPair, index: int) -> Evidence:
    """What input ``index`` is, as A recorded it (B where A lacks it): ``(kind, dtype, shape)``."""
    sides = [ctx.fusion_a(pair).inputs, ctx.fusion_b(pair).inputs]
    side = 0 if index < len(sides[0]) else 1
    meta: TensorMeta | None = sides[side][index] if index < len(sides[side]) else None
    value = None if meta is None else (meta.kind, meta.dtype, tuple(meta.shape))
    a, b = (value, None) if side == 0 else (None, value)
    return Evidence("input", a, b, "value", index=index)


def _changed(change: PropertyChange, unit: Unit = "value") -> Evidence:
    return Evidence(change.attribute or "input", change.a, change.b, unit, index=change.input_index)


def _vector_elements(alignment: object, dtype: str) -> int | None:
    size = itemsize_bytes(dtype)
    if not isinstance(alignment, int) or not size or alignment <= 0:
        return None
    return max(min(alignment, VECTOR_BYTES) // size, 1)


def _alignment(change: PropertyChange, described: Evidence) -> list[Evidence]:
    """The alignment on each side, the widest vector access it allows (``None``: unknown), and
    ``narrow_vectors`` (the widest access's bytes) when a side is below it."""
    meta = described.a if described.a is not None else described.b
    dtype = meta[1] if isinstance(meta, tuple) else ""
    index = change.input_index
    data = [
        Evidence("alignment_bytes", change.a, change.b, "bytes", index=index),
        Evidence(
            "widest_vector",
            _vector_elements(change.a, dtype),
            _vector_elements(change.b, dtype),
            "elements",
            index=index,
        ),
    ]
    known = [v for v in (change.a, change.b) if isinstance(v, int)]
    if known and min(known) < VECTOR_BYTES:
        data.append(Evidence("narrow_vectors", VECTOR_BYTES, VECTOR_BYTES, "bytes", index=index))
    return data


def _input_finding(pair: FusionPair, rule: str, data: list[Evidence]) -> Finding:
    return make_finding(rule, data, [pair.label])


def storage_offset(ctx: RuleContext) -> Iterator[Finding]:
    """A tensor input starts at another storage offset (alignment, if it changed, in evidence)."""
    for pair, inputs in _changed_inputs(ctx):
        for index, fields in inputs:
            change = fields.get("storage_offset")
            if change is None:
                continue
            described = _described(ctx, pair, index)
            data = [described, _changed(change, "elements")]
            alignment = fields.get("alignment_bytes")
            if alignment is not None:
                data += _alignment(alignment, described)
            yield _input_finding(pair, "storage_offset", data)


def input_alignment(ctx: RuleContext) -> Iterator[Finding]:
    """A tensor input's data pointer alignment differs at the same storage offset."""
    for pair, inputs in _changed_inputs(ctx):
        for index, fields in inputs:
            change = fields.get("alignment_bytes")
            if change is None or "storage_offset" in fields:
                continue
            described = _described(ctx, pair, index)
            yield _input_finding(pair, "input_alignment", [described, *_alignment(change, described)])


def input_strides(ctx: RuleContext) -> Iterator[Finding]:
    """Same shape, other strides or contiguity: another memory layout, another schedule."""
    for pair, inputs in _changed_inputs(ctx):
        for index, fields in inputs:
            layout = [fields[f] for f in ("stride", "is_contiguous") if f in fields]
            if not layout or "shape" in fields:
                continue
            data = [_described(ctx, pair, index), *(_changed(c) for c in layout)]
            yield _input_finding(pair, "input_strides", data)


def dtype_shape(ctx: RuleContext) -> Iterator[Finding]:
    """An input has another dtype, shape or kind (each by its name), or exists on one side only
    (``input``: what it is on the side that has it, ``None`` on the other)."""
    for pair, inputs in _changed_inputs(ctx):
        data = []
        for index, fields in inputs:
            if "" in fields:
                change = fields[""]
                data.append(Evidence("input", _present(change.a), _present(change.b), "value", index=index))
                continue
            data += [_changed(fields[name]) for name in ("kind", "dtype", "shape") if name in fields]
        if data:
            yield _input_finding(pair, "dtype_shape", data)


def _present(value: object) -> tuple[Any, ...] | None:
    """``(kind, dtype, shape)`` of an input recorded whole (``inputs[2]``); ``None`` where it is absent."""
    if not isinstance(value, dict):
        return None
    return (value.get("kind"), value.get("dtype"), tuple(value.get("shape") or ()))


def index_value_range(ctx: RuleContext) -> Iterator[Finding]:
    """Integer (index) inputs hold another range of values: ``min_value`` and ``max_value`` on each
    side, and ``beyond_int32`` (the int32 limit) when a side holds values past it."""
    for pair, inputs in _changed_inputs(ctx):
        for index, fields in inputs:
            if "min_value" not in fields and "max_value" not in fields:
                continue
            fa, fb = ctx.fusion_a(pair), ctx.fusion_b(pair)
            low_a, high_a = _range(fa.inputs, index)
            low_b, high_b = _range(fb.inputs, index)
            data = [
                _described(ctx, pair, index),
                Evidence("min_value", low_a, low_b, "value", index=index),
                Evidence("max_value", high_a, high_b, "value", index=index),
            ]
            if any(isinstance(v, (int, float)) and v > _INT32_MAX for v in (high_a, high_b)):
                data.append(Evidence("beyond_int32", _INT32_MAX, _INT32_MAX, "value", index=index))
            yield _input_finding(pair, "index_value_range", data)


def _range(inputs: tuple[TensorMeta, ...], index: int) -> tuple[float | None, float | None]:
    if index >= len(inputs):
        return None, None
    return inputs[index].min_value, inputs[index].max_value


def scalar_value(ctx: RuleContext) -> Iterator[Finding]:
    """A scalar input has another value."""
    for pair, inputs in _changed_inputs(ctx):
        for index, fields in inputs:
            change = fields.get("scalar_value")
            if change is not None:
                yield _input_finding(pair, "scalar_value", [_described(ctx, pair, index), _changed(change)])
