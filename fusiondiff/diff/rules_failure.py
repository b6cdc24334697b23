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

from fusiondiff.definition import definition_calls
from fusiondiff.diff.context import RuleContext, make_finding, show
from fusiondiff.diff.records import Finding, FusionPair
from fusiondiff.model import FusionRecord, TensorMeta, view_extent

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
    """The failing side's index values fall outside the rows of the tensor they index."""
    for pair, side, failing, other in _failed_sides(ctx):
        lines = []
        for use in index_uses(failing.definition):
            meta = _input(failing, use.index_input)
            if meta is None or meta.min_value is None or meta.max_value is None:
                continue
            table = _input(failing, use.table_input) if use.table_input is not None else None
            rows = table.shape[use.dim] if table is not None and use.dim < len(table.shape) else None
            low, high = meta.min_value, meta.max_value
            if low >= 0 and (rows is None or high < rows):
                continue
            bound = f"[0, {rows})" if rows is not None else "[0, rows)"
            what = f"dim {use.dim} of input {use.table_input} ({rows} rows)" if rows is not None else "its table"
            lines.append(
                f"{side}'s index input {use.index_input} of {use.op} holds [{_int(low)}, {_int(high)}], "
                f"outside {bound} of {what}"
            )
            peer = _input(other, use.index_input)
            if peer is not None and peer.min_value is not None:
                lines.append(f"{_other(side)} held [{_int(peer.min_value)}, {_int(peer.max_value)}] there")
        if lines:
            lines.append(
                "an out-of-bounds gather reads past the table: CUDA's illegal address. Replay with the "
                "live inputs (`fusiondiff replay SCRIPT --inputs LIVE.json`) or a repro written by "
                "`fusiondiff repro`, which keeps the recorded index range"
            )
            title = f"{pair.label}: {side}'s index values fall outside the table they index"
            yield make_finding("index_out_of_range", "failure", title, lines, [pair.label], 0.0)


def view_past_storage(ctx: RuleContext) -> Iterator[Finding]:
    """A failing side's strided input reaches past the end of its storage."""
    for pair, side, failing, _ in _failed_sides(ctx):
        lines = []
        for meta in failing.inputs:
            needed = view_extent(meta)
            if meta.kind == "tensor" and meta.storage_numel and needed > meta.storage_numel:
                lines.append(
                    f"{side}'s input {meta.index} ({meta.dtype} {list(meta.shape)} stride {list(meta.stride)}, "
                    f"offset {meta.storage_offset}) reaches element {needed - 1} of a storage of "
                    f"{meta.storage_numel}"
                )
        if lines:
            title = f"{pair.label}: a view of {side} reaches past its storage"
            yield make_finding("view_past_storage", "failure", title, lines, [pair.label], 0.0)


def failed_execution(ctx: RuleContext) -> Iterator[Finding]:
    """The failure itself: which side, what kind, its message, where the full log is."""
    for pair, side, failing, _ in _failed_sides(ctx):
        failure = failing.failure
        assert failure is not None
        lines = [f"{failure.kind.replace('_', ' ')}: {failure.message}"]
        if failure.log_file:
            lines.append(f"full output (C++ stack) in {failure.log_file}, beside {side}'s capture")
        inputs = sorted({c.path for c in pair.changes if c.category == "inputs"})
        if inputs:
            lines.append(f"inputs that differ between the sides: {show(inputs[:8])}")
        lines.append(f"{side} recorded its inputs but has no kernels or samples for this fusion")
        title = f"{pair.label} failed in {side}"
        yield make_finding("failed_execution", "failure", title, lines, [pair.label], 0.0)


def _failed_sides(ctx: RuleContext) -> Iterator[tuple[FusionPair, str, FusionRecord, FusionRecord]]:
    """Each pair and side whose execution failed, with the failing record and the other side's."""
    for pair in ctx.pairs:
        for side in pair.failed:
            a, b = ctx.fusion_a(pair), ctx.fusion_b(pair)
            yield (pair, side, a, b) if side == "A" else (pair, side, b, a)


def _other(side: str) -> str:
    return "B" if side == "A" else "A"


def _input(fusion: FusionRecord, index: int | None) -> TensorMeta | None:
    if index is None:
        return None
    return next((m for m in fusion.inputs if m.index == index), None)


def _int(value: float | None) -> str:
    return "?" if value is None else str(int(value))


def _is_input_scalar(call: ast.Call) -> bool:
    """``fd.define_scalar(None, ...)`` or ``fd.define_scalar(dtype=...)``: a symbolic scalar input."""
    first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "value"), None)
    return first is None or (isinstance(first, ast.Constant) and first.value is None)


def _dim(call: ast.Call) -> int:
    node = next((k.value for k in call.keywords if k.arg == "dim"), call.args[2] if len(call.args) > 2 else None)
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, int) else 0
