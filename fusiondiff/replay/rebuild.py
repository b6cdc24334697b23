"""Make nvFuser's printed definition rebuild the fusion it was printed from.

``print(fd)`` regenerates Python from the fusion IR (nvFuser's ``python_translate.cpp``). Run
again, that text builds another fusion in two ways that change the generated CUDA source (seen on
the H200 with the training steps of three litgpt models, 2026-11-30):

- **Constants.** Doubles are printed with 6 significant digits (``1.41421`` for sqrt(2),
  ``0.000488281`` for 1/2048). :func:`restore_constants` puts back the exact values that the
  recorder read from the IR (``Fusion.print_math`` prints them with ``max_digits10`` digits).
- **Index scalars.** Integer scalars are printed as bare Python literals, which a rebuild defines
  as ``DataType.Int``; in the live fusion, scalars derived from tensor extents are
  ``DataType.Index``. nvFuser then adds a cast: ``i13 = __to_index(i12)`` in a pad's width
  (rotary embeddings' ``cat``), or writes ``2048LL`` for ``2048`` in a 32-bit-indexed kernel
  (LayerNorm's ``var_mean`` count). :func:`index_literals` defines those literals as Index
  scalars again. Which literals are Index is not printed; the two rules below are what the IR
  shows for the fusions Thunder builds, each justified by a recorded case in tests/replay/test_rebuild_from_print.py.

Everything here is text in, text out: no nvFuser or torch.
"""

from __future__ import annotations

import ast
import io
import math
import re
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeGuard

from fusiondiff.records.definition import definition_calls
from fusiondiff.records.errors import ReplayError

_FLOAT_LITERAL = re.compile(r"(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?")
"""A decimal number token as Python writes it (``1.``, ``.5``, ``1e-05``; not hex, underscores or
imaginary), matched whole against a NUMBER token the tokenizer cut out; a float has a point or an
exponent. The sign is a token of its own, and the constants put back are magnitudes. Not
:data:`fusiondiff.diff.compare._FLOAT_LITERAL`, which searches printed text for the one form
nvFuser prints, its sign included: one reads text, the other classifies tokens."""
_INDEX_SCALAR = "fd.define_scalar({value}, dtype=DataType.Index)"
_FLOAT_CASTS = ("DataType.Double", "DataType.Float")


@dataclass(frozen=True)
class Rebuilt:
    """A printed definition made faithful, and what was changed in it (for the script's header)."""

    text: str
    restored: tuple[tuple[str, str], ...] = ()
    """``(printed, exact)`` constants put back."""
    ambiguous: tuple[str, ...] = ()
    """Printed constants left as printed: several recorded constants round to them."""
    index_literals: int = 0
    """Integer literals defined as ``DataType.Index`` scalars."""


def faithful_definition(definition: str, exact_constants: Iterable[str]) -> Rebuilt:
    """The printed ``definition`` with exact constants and Index scalars restored."""
    text, restored, ambiguous = restore_constants(definition, exact_constants)
    text, count = index_literals(text)
    return Rebuilt(text=text, restored=restored, ambiguous=ambiguous, index_literals=count)


def restore_constants(
    definition: str, exact_constants: Iterable[str]
) -> tuple[str, tuple[tuple[str, str], ...], tuple[str, ...]]:
    """Put full-precision constants back into a printed definition.

    A printed literal is replaced when exactly one recorded constant rounds to it at 6 significant
    digits and differs from it. Returns the new text, the ``(printed, exact)`` pairs replaced, and
    the printed literals left alone because several recorded constants round to them.
    """
    values = set()
    for text in exact_constants:
        try:
            value = abs(float(text))
        except ValueError:
            continue
        if math.isfinite(value) and value != 0.0:
            values.add(value)
    if not values:
        return definition, (), ()
    lines = definition.splitlines(keepends=True)
    edits: list[tuple[int, int, int, str]] = []
    restored: dict[str, str] = {}
    ambiguous: list[str] = []
    for tok in _tokens(definition):
        is_float = _FLOAT_LITERAL.fullmatch(tok.string) and set(".eE") & set(tok.string)
        if tok.type != tokenize.NUMBER or not is_float:
            continue
        printed = float(tok.string)
        candidates = {v for v in values if float(f"{v:.6g}") == printed}
        if len(candidates) > 1:
            if tok.string not in ambiguous:
                ambiguous.append(tok.string)
        elif candidates and (exact := candidates.pop()) != printed:
            edits.append((tok.start[0], tok.start[1], tok.end[1], repr(exact)))
            restored[tok.string] = repr(exact)
    return _apply(lines, edits), tuple(restored.items()), tuple(ambiguous)


def index_literals(definition: str) -> tuple[str, int]:
    """Define as ``DataType.Index`` the integer literals that were Index scalars in the IR.

    1. **Pad widths.** ``fd.ops.pad`` takes Index widths. A scalar computed for one
       (``c354 = fd.ops.add(0, 64)``, then ``pad_widths=[c354, ...]``) was Index, and so were the
       literal operands of the scalar operations it was computed from.
    2. **Extents cast to floating point.** ``fd.ops.cast(2048, dtype=DataType.Double)`` where 2048
       is the size of a dimension of an input tensor: the count of a ``var_mean`` reduction, an
       extent (Index). Other literals (a ``correction`` of 0) were Python ints (Int) and stay.

    Returns the new text and the number of literals changed.
    """
    scalar_ops: dict[str, ast.Call] = {}
    extents: set[int] = set()
    index_names: set[str] = set()
    cast_literals: list[ast.Constant] = []
    for statement in definition_calls(definition):
        op, call = statement.op, statement.call
        extents.update(_shape(call))
        if op == "ops.pad":
            widths = next((k.value for k in call.keywords if k.arg == "pad_widths"), None)
            if widths is None and len(call.args) > 1:
                widths = call.args[1]
            if isinstance(widths, (ast.List, ast.Tuple)):
                index_names.update(e.id for e in widths.elts if isinstance(e, ast.Name))
        elif statement.targets and op is not None and op.startswith("ops."):
            scalar_ops[statement.targets[0]] = call
            if op == "ops.cast" and _casts_to_float(call) and call.args and _is_int_literal(call.args[0]):
                cast_literals.append(call.args[0])
    literals: list[ast.Constant] = []
    pending = list(index_names)
    while pending:  # the Index scalars' operands, back to the literals they came from
        operation = scalar_ops.get(pending.pop())
        if operation is None:
            continue
        for arg in operation.args:
            if _is_int_literal(arg):
                literals.append(arg)
            elif isinstance(arg, ast.Name) and arg.id not in index_names:
                index_names.add(arg.id)
                pending.append(arg.id)
    literals += [c for c in cast_literals if isinstance(c.value, int) and c.value in extents and c.value > 1]
    unique = {(c.lineno, c.col_offset): c for c in literals}
    edits = [
        (c.lineno, c.col_offset, c.end_col_offset or c.col_offset, _INDEX_SCALAR.format(value=c.value))
        for c in unique.values()
    ]
    return _apply(definition.splitlines(keepends=True), edits), len(edits)


def _tokens(definition: str) -> list[tokenize.TokenInfo]:
    try:
        return list(tokenize.generate_tokens(io.StringIO(definition).readline))
    except (tokenize.TokenError, SyntaxError) as exc:
        raise ReplayError(f"the recorded definition could not be read: {exc}") from None


def _apply(lines: list[str], edits: list[tuple[int, int, int, str]]) -> str:
    """Replace ``(row, begin, end)`` spans (1-based rows, one line each) by their text."""
    for row, begin, end, text in sorted(edits, reverse=True):
        line = lines[row - 1]
        lines[row - 1] = line[:begin] + text + line[end:]
    return "".join(lines)


def _is_int_literal(node: ast.expr) -> TypeGuard[ast.Constant]:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _casts_to_float(call: ast.Call) -> bool:
    dtype = next((k.value for k in call.keywords if k.arg == "dtype"), None)
    if dtype is None and len(call.args) > 1:
        dtype = call.args[1]
    return dtype is not None and ast.unparse(dtype) in _FLOAT_CASTS


def _shape(call: ast.Call) -> set[int]:
    """Sizes a call states: ``define_tensor(shape=)``, ``expand(shape=)``, ``reshape(new_shape=)``."""
    found: set[int] = set()
    for keyword in call.keywords:
        if keyword.arg in ("shape", "new_shape") and isinstance(keyword.value, (ast.List, ast.Tuple)):
            found.update(e.value for e in keyword.value.elts if _is_int_literal(e) and isinstance(e.value, int))
    return found
