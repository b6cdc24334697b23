"""Outputs a kernel does not write: a fusion output that is a view of another output or of an input.

nvFuser gives an output that its definition makes from another output or from an input through
view ops alone (``permute``, ``reshape``, ``squeeze``, ``broadcast``...) the memory of that tensor,
where the layouts allow it: no kernel writes it. Counting it as a write doubles the bytes of a
fusion that returns a tensor and its transpose, and puts the kernel above what DRAM can deliver.

An output is taken for such an alias where both hold:

- the definition makes it from the other tensor through view ops alone (read once per definition
  text, and parsed only where an output is the result of a view op);
- its recorded layout is one a view of the other tensor's layout can have: the same dtype, no more
  elements than the other reaches, and for a chain of permutes the same strides in another order
  (a permuted copy would be written dense), for any other chain a dense source (a reshape of a
  dense tensor is a view).
"""

from __future__ import annotations

import ast
import functools
import math
import re
from dataclasses import dataclass

from fusiondiff.records.definition import definition_calls
from fusiondiff.records.model import TensorMeta

VIEW_OPS = frozenset(
    {"ops.permute", "ops.reshape", "ops.squeeze", "ops.broadcast", "ops.broadcast_in_dim", "ops.expand"}
)
"""Ops whose result can share its operand's memory."""

_OUTPUT = re.compile(r"fd\.add_output\(\s*(\w+)")
_VIEW_RESULT = r"^\s*{name}\s*=\s*fd\.ops\.(?:permute|reshape|squeeze|broadcast|broadcast_in_dim|expand)\("


@dataclass(frozen=True)
class ViewOf:
    """An output the definition makes from another tensor through view ops alone."""

    output: int
    """The output's position."""
    source: str
    """``output`` or ``input``: what it is made from."""
    position: int
    """The position of that output or input."""
    ops: tuple[str, ...]
    """The view ops on the way, from the source (``permute``)."""


@functools.lru_cache(maxsize=4_096)
def views_of(definition: str) -> tuple[ViewOf, ...]:
    """The outputs of ``definition`` made from another output or an input through view ops alone,
    each from the nearest such tensor; empty (without parsing) where no output is a view op's result."""
    names = _OUTPUT.findall(definition)
    if not any(re.search(_VIEW_RESULT.format(name=re.escape(n)), definition, re.MULTILINE) for n in set(names)):
        return ()
    made_by: dict[str, tuple[str, str]] = {}
    inputs: dict[str, int] = {}
    outputs: list[str] = []
    for statement in definition_calls(definition):
        op, call = statement.op, statement.call
        if op == "define_tensor" or op == "define_scalar" and _is_input_scalar(call):
            if statement.targets:
                inputs[statement.targets[0]] = len(inputs)
            else:
                inputs[f"<unnamed {len(inputs)}>"] = len(inputs)
        elif op == "add_output" and call.args and isinstance(call.args[0], ast.Name):
            outputs.append(call.args[0].id)
        elif op in VIEW_OPS and call.args and isinstance(call.args[0], ast.Name) and len(statement.targets) == 1:
            made_by[statement.targets[0]] = (op.removeprefix("ops."), call.args[0].id)
    found = []
    for position, name in enumerate(outputs):
        source = _nearest_source(name, position, made_by, inputs, outputs)
        if source is not None:
            found.append(ViewOf(position, *source))
    return tuple(found)


def _is_input_scalar(call: ast.Call) -> bool:
    """``fd.define_scalar(None, dtype=...)`` is an input; a scalar with a value is a constant."""
    return bool(call.args) and isinstance(call.args[0], ast.Constant) and call.args[0].value is None


def _nearest_source(
    name: str, position: int, made_by: dict[str, tuple[str, str]], inputs: dict[str, int], outputs: list[str]
) -> tuple[str, int, tuple[str, ...]] | None:
    """Up the view ops from output ``name``: the first earlier output or input met, with the ops."""
    ops: list[str] = []
    current = name
    seen = {name}
    while current in made_by:
        op, current = made_by[current]
        if current in seen:
            return None
        seen.add(current)
        ops.append(op)
        if current in outputs and outputs.index(current) != position:
            return "output", outputs.index(current), tuple(reversed(ops))
        if current in inputs:
            return "input", inputs[current], tuple(reversed(ops))
    return None


def _elements(meta: TensorMeta) -> int:
    return math.prod(n for n, s in zip(meta.shape, meta.stride) if s != 0)


def layout_fits(view: TensorMeta, source: TensorMeta, ops: tuple[str, ...]) -> bool:
    """Whether ``view``'s recorded layout is one a view of ``source`` made by ``ops`` can have."""
    if view.kind != "tensor" or source.kind != "tensor" or view.dtype != source.dtype:
        return False
    if _elements(view) > _elements(source):
        return False
    if all(op == "permute" for op in ops):
        return sorted(view.stride) == sorted(source.stride)
    return source.is_contiguous


def aliased_outputs(definition: str, outputs: tuple[TensorMeta, ...], inputs: tuple[TensorMeta, ...]) -> dict[int, str]:
    """Output position -> why no kernel writes it, for each output that is a view of another
    output or an input (module docstring); the others are written."""
    by_output = {m.index: m for m in outputs}
    by_input = {m.index: m for m in inputs}
    found: dict[int, str] = {}
    for view in views_of(definition):
        meta = by_output.get(view.output)
        source = (by_output if view.source == "output" else by_input).get(view.position)
        if meta is None or source is None:
            continue
        if layout_fits(meta, source, view.ops):
            made = " of a ".join(reversed(view.ops))
            found[view.output] = (
                f"output {view.output} is a {made} of {view.source} {view.position} (the same memory): not counted as a write"
            )
    return found
