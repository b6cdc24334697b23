"""Rules for a fusion whose execution failed on one side (a crashed replay).

A failure ranks before any timing finding: one side has no numbers at all. The rules look for the
cause in what both sides recorded before the fusion ran (the recorder describes inputs first):

- ``index_out_of_range``: an index input holds values outside ``[0, rows)`` of the dimension of
  the tensor it indexes (``index_select``, ``take_along_axis``, ``gather``, ``embedding_fwd``). This
  is how nvFuser's own repro scripts most often crash: ``make_tensor`` draws ids in about [-9, 10).
- ``view_past_storage``: a strided view reaches past the end of its storage.
- ``failed_execution``: the failure itself, with its kind and message; it lists the input
  differences the pair has, and follows the rules above when they found the cause.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from fusiondiff.diff.context import RuleContext, make_finding
from fusiondiff.diff.records import Evidence, EvidenceValue, Finding, FusionPair
from fusiondiff.records.definition import definition_calls
from fusiondiff.records.model import FusionRecord, TensorMeta, view_extent

_GATHERS = {"ops.index_select": (0, 1), "ops.take_along_axis": (0, 1), "ops.gather": (0, 1)}
"""op -> (position of the indexed tensor, position of the index tensor)."""
_EMBEDDING = "ops.embedding_fwd"
_VIEW_OPS = {
    "ops.reshape", "ops.broadcast", "ops.broadcast_in_dim", "ops.cast", "ops.permute", "ops.expand",
    "ops.squeeze", "ops.set", "ops.segment_set", "ops.stride_order",
}  # fmt: skip
"""Ops whose first operand's values pass through unchanged (for following an index to its input)."""


@dataclass(frozen=True)
class IndexUse:
    """An index input of a fusion and the input dimension its values select from."""

    index_input: int
    table_input: int | None
    """The indexed tensor's input position, when it is an input itself (else its rows are unknown)."""
    dim: int
    op: str


def index_uses(definition: str) -> list[IndexUse]:
    """Where the definition's gathers take their indices from, traced back through view ops to
    the fusion's inputs."""
    origin: dict[str, int] = {}
    defined_inputs: set[str] = set()
    inputs = 0
    uses = []
    for statement in definition_calls(definition):
        op, call, targets = statement.op, statement.call, statement.targets
        if op == "define_tensor" or (op == "define_scalar" and _is_input_scalar(call)):
            if targets:
                origin[targets[0]] = inputs
                if op == "define_tensor":
                    defined_inputs.add(targets[0])
            inputs += 1
        elif op in _VIEW_OPS and call.args and isinstance(call.args[0], ast.Name) and targets:
            if call.args[0].id in origin:
                origin[targets[0]] = origin[call.args[0].id]
        elif op in _GATHERS or op == _EMBEDDING:
            table_at, index_at = _GATHERS.get(op, (1, 0))
            args = call.args
            index_arg = args[index_at] if len(args) > max(table_at, index_at) else None
            if not isinstance(index_arg, ast.Name):
                continue
            index = origin.get(index_arg.id)
            table = args[table_at]
            if index is None:
                continue
            dim = _dim(call) if op != _EMBEDDING else 0
            # only an input used as it is has known rows (a reshaped table's rows are another size)
            direct = isinstance(table, ast.Name) and table.id in defined_inputs
            table_input = origin.get(table.id) if direct and isinstance(table, ast.Name) else None
            uses.append(IndexUse(index, table_input, dim, op.removeprefix("ops.")))
    return uses


def index_out_of_range(ctx: RuleContext) -> Iterator[Finding]:
    """The failing side's index values fall outside the rows of the tensor they index. Evidence:
    ``failed_side``; per index input (``index``, the op as ``subject``): ``index_range`` ((min, max)
    on the failing side, the other side's where it recorded one) and ``table`` ((its input
    position or ``None``, the dim, its rows or ``None``) on the failing side)."""
    for pair, side, failing, other in _failed_sides(ctx):
        data = []
        for use in index_uses(failing.definition):
            meta = _input(failing, use.index_input)
            if meta is None or meta.min_value is None or meta.max_value is None:
                continue
            table = _input(failing, use.table_input) if use.table_input is not None else None
            rows = table.shape[use.dim] if table is not None and use.dim < len(table.shape) else None
            low, high = meta.min_value, meta.max_value
            if low >= 0 and (rows is None or high < rows):
                continue
            peer = _input(other, use.index_input)
            held = (peer.min_value, peer.max_value) if peer is not None and peer.min_value is not None else None
            data += [
                Evidence(
                    "index_range", *_sides(side, (low, high), held), "value", index=use.index_input, subject=use.op
                ),
                Evidence(
                    "table", *_sides(side, (use.table_input, use.dim, rows), None), "value", index=use.index_input
                ),
            ]
        if data:
            yield make_finding("index_out_of_range", [_side(side), *data], [pair.label])


def view_past_storage(ctx: RuleContext) -> Iterator[Finding]:
    """A failing side's strided input reaches past the end of its storage. Evidence:
    ``failed_side``; per input (``index``) on the failing side: ``view`` ((dtype, shape, stride,
    storage offset)) and ``reach`` ((last element reached, storage elements))."""
    for pair, side, failing, _ in _failed_sides(ctx):
        data = []
        for meta in failing.inputs:
            needed = view_extent(meta)
            if meta.kind == "tensor" and meta.storage_numel and needed > meta.storage_numel:
                view = (meta.dtype, tuple(meta.shape), tuple(meta.stride), meta.storage_offset)
                data += [
                    Evidence("view", *_sides(side, view, None), "value", index=meta.index),
                    Evidence(
                        "reach", *_sides(side, (needed - 1, meta.storage_numel), None), "elements", index=meta.index
                    ),
                ]
        if data:
            yield make_finding("view_past_storage", [_side(side), *data], [pair.label])


def failed_execution(ctx: RuleContext) -> Iterator[Finding]:
    """The failure itself: which side (``failed_side``), its ``failure_kind``, ``failure_message``
    and ``log_file`` on that side, and the paths of the inputs that differ (``differing_inputs``)."""
    for pair, side, failing, _ in _failed_sides(ctx):
        failure = failing.failure
        assert failure is not None
        data = [
            _side(side),
            Evidence("failure_kind", *_sides(side, failure.kind, None), "text"),
            Evidence("failure_message", *_sides(side, failure.message, None), "text"),
        ]
        if failure.log_file:
            data.append(Evidence("log_file", *_sides(side, failure.log_file, None), "text"))
        inputs = sorted({c.path for c in pair.changes if c.category == "inputs"})
        if inputs:
            data.append(Evidence("differing_inputs", tuple(inputs), tuple(inputs), "value"))
        yield make_finding("failed_execution", data, [pair.label])


def _side(side: str) -> Evidence:
    """Which side failed, as the evidence ``failed_side``."""
    return Evidence("failed_side", side, side, "text")


def _sides(side: str, value: EvidenceValue, other: EvidenceValue) -> tuple[EvidenceValue, EvidenceValue]:
    """(A's, B's): ``value`` on ``side``, ``other`` on the other side."""
    return (value, other) if side == "A" else (other, value)


def _failed_sides(ctx: RuleContext) -> Iterator[tuple[FusionPair, str, FusionRecord, FusionRecord]]:
    """Each pair and side whose execution failed, with the failing record and the other side's; a
    failure of one kind on both sides is the same on both, no difference between them."""
    for pair in ctx.pairs:
        for side in () if pair.failed_alike else pair.failed:
            a, b = ctx.fusion_a(pair), ctx.fusion_b(pair)
            yield (pair, side, a, b) if side == "A" else (pair, side, b, a)


def _input(fusion: FusionRecord, index: int | None) -> TensorMeta | None:
    if index is None:
        return None
    return next((m for m in fusion.inputs if m.index == index), None)


def _is_input_scalar(call: ast.Call) -> bool:
    """``fd.define_scalar(None, ...)`` or ``fd.define_scalar(dtype=...)``: a symbolic scalar input."""
    first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "value"), None)
    return first is None or (isinstance(first, ast.Constant) and first.value is None)


def _dim(call: ast.Call) -> int:
    node = next((k.value for k in call.keywords if k.arg == "dim"), call.args[2] if len(call.args) > 2 else None)
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, int) else 0
