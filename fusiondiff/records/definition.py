"""Telling whether two printed fusion definitions are the same fusion.

nvFuser prints a definition from its IR (``print(fd)``). Two prints of one fusion differ when the
fusion was built twice (Thunder's live definition, then a script rebuilt from that print):

- value names come from IR numbering (``tv6``, ``c44``), which depends on how the fusion was built;
- statements come in a topological order that depends on creation order;
- the printer's round trip adds casts that change nothing: a cast to the dtype a value already has,
  and ``cast(..., dtype=DataType.Index)`` on integer scalars such as pad widths.

:func:`canonical_definition` removes the first difference (for readable diffs);
:func:`structural_hash` removes all three by hashing the definition as a graph from its outputs.
:func:`definition_calls` reads a definition's ``fd`` calls for rules that look at its graph.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import re
from dataclasses import dataclass
from typing import NamedTuple

_ASSIGNED = re.compile(r"^\s*(?P<targets>[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*=(?!=)")
_IDENTIFIER = re.compile(r"\b[A-Za-z_]\w*\b")
_STATEMENT = re.compile(
    r"^\s*(?:(?P<targets>[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*=\s*)?fd\.(?P<call>[\w.]+)\((?P<args>.*)\)\s*$"
)
_NAME_PARTS = re.compile(r"(\b[A-Za-z_]\w*\b)")
"""Splits a text around its names (a capturing group keeps them: text, name, text, ..., name, text)."""
_DTYPE = re.compile(r"dtype\s*=\s*DataType\.(\w+)")
_PRESERVES_DTYPE = {
    "ops.broadcast",
    "ops.broadcast_in_dim",
    "ops.expand",
    "ops.reshape",
    "ops.permute",
    "ops.slice",
    "ops.pad",
    "ops.cat",
    "ops.set",
    "ops.segment_set",
    "ops.squeeze",
    "ops.stride_order",
    "ops.neg",
}


_CACHED = 32_768
"""Definitions whose canonical text and graph hash are kept: a session's repeated layers print the
same definition, and a diff reads each one again for every pass; thousands stay cheap to keep."""


@functools.lru_cache(maxsize=_CACHED)
def canonical_definition(definition: str) -> str:
    """The definition with value names replaced by ``v0, v1, ...`` in order of assignment, and
    trailing spaces and blank lines dropped."""
    lines = [line.rstrip() for line in definition.strip().splitlines() if line.strip()]
    names: dict[str, str] = {}
    for line in lines:
        match = _ASSIGNED.match(line)
        if match:
            for name in re.split(r"\s*,\s*", match["targets"]):
                names.setdefault(name, f"v{len(names)}")
    if not names:
        return "\n".join(lines)
    # every identifier looked up, rather than one alternation of all names tried at every position:
    # that was quadratic (a definition of 20,000 constants took minutes)
    return "\n".join(_IDENTIFIER.sub(lambda m: names.get(m[0], m[0]), line) for line in lines)


def definition_hash(definition: str) -> str:
    """sha256 of the canonical text: equal for two prints that differ only in value names."""
    return hashlib.sha256(canonical_definition(definition).encode()).hexdigest()


@functools.lru_cache(maxsize=_CACHED)
def _digest(text: str) -> str:
    # Kept per text: a session's definitions share most of their graphs (the same inputs and
    # layers), so most values hash the same node text again; a look-up is ten times cheaper.
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class _Statement(NamedTuple):  # a tuple: built for every new line read, and cheaper to build than a frozen dataclass
    """One ``fd`` statement of a printed definition, as :func:`structural_hash` reads it."""

    call: str
    """``ops.add`` for ``fd.ops.add(...)``."""
    targets: tuple[str, ...]
    args: str
    """The text between the call's parentheses."""
    args_parts: tuple[str, ...]
    """``args`` split around its names: text, name, text, ..., name, text (names at odd places)."""
    dtype: str | None
    """The ``dtype=DataType.<name>`` the statement asks for, if any."""
    is_input: bool
    """A ``define_tensor``, or a ``define_scalar`` whose value is given at execution."""


@functools.lru_cache(maxsize=_CACHED)
def _statement(line: str) -> _Statement | None:
    """The statement a stripped line holds, None when it is not an ``fd`` call. Kept per line:
    the same lines come back in every definition of a layer, and in both sides of a diff."""
    match = _STATEMENT.match(line)
    if match is None:
        return None
    call, args = match["call"], match["args"]
    targets_text = match["targets"]
    if not targets_text:
        targets: tuple[str, ...] = ()
    elif "," in targets_text:
        targets = tuple(map(str.strip, targets_text.split(",")))
    else:  # one name: the pattern leaves no space around it
        targets = (targets_text,)
    dtype_match = _DTYPE.search(args) if "DataType" in args else None
    is_input = call == "define_tensor" or (call == "define_scalar" and "None" in args.split(",")[0])
    dtype = dtype_match[1] if dtype_match else None
    return _Statement(call, targets, args, tuple(_NAME_PARTS.split(args)), dtype, is_input)


def _resolve(statement: _Statement, values: dict[str, str]) -> tuple[str, list[str]]:
    """The statement's arguments with each defined value's name replaced by its hash, and the
    names so replaced, in order."""
    parts = list(statement.args_parts)
    operands = []
    for i in range(1, len(parts), 2):
        value = values.get(parts[i])
        if value is not None:
            operands.append(parts[i])
            parts[i] = value
    return ("".join(parts) if operands else statement.args), operands


GRAPH_HASH_TAG = "graph1:"
"""Prefix of a graph hash written into a capture (:func:`tagged_structural_hash`): names the
algorithm of :func:`structural_hash`, so a file written by a fusiondiff that hashed graphs another
way is hashed again rather than matched on a hash this one would not give. Change it with the
algorithm."""


_RECORDED_HASH = re.compile(re.escape(GRAPH_HASH_TAG) + "[0-9a-f]{32}")
"""A graph hash as this algorithm writes it: anything else in a file (another algorithm's, or text
a crafted file put there, which reports would show) is not used."""


def tagged_structural_hash(definition: str) -> str:
    """:func:`structural_hash` as a capture stores it, tagged with its algorithm."""
    return GRAPH_HASH_TAG + structural_hash(definition)


def recorded_structural_hash(definition: str, recorded: str | None) -> str:
    """The definition's graph hash: the one its capture recorded (``recorded``, from
    :func:`tagged_structural_hash` at record time) where this algorithm wrote it, else computed.
    A diff of two 10,000-fusion captures spends most of its matching hashing graphs the recorder
    already hashed."""
    if recorded is not None and _RECORDED_HASH.fullmatch(recorded):
        return recorded[len(GRAPH_HASH_TAG) :]
    return structural_hash(definition)


@functools.lru_cache(maxsize=_CACHED)
def structural_hash(definition: str) -> str:
    """Hash of the fusion as a graph: each value is hashed from its operation and the hashes of
    its operands; the result hashes the outputs in order. Names, statement order and no-op casts
    do not change it. Text that does not parse as statements is hashed as canonical text."""
    values: dict[str, str] = {}
    dtypes: dict[str, str | None] = {}
    outputs: list[str] = []
    inputs = 0
    for raw in definition.splitlines():
        line = raw.strip()
        if not line or line.startswith(("def ", "#")):
            continue
        statement = _statement(line)
        if statement is None:
            return "text:" + definition_hash(definition)
        resolved, operands = _resolve(statement, values)
        call, targets, target_dtype = statement.call, statement.targets, statement.dtype
        if call == "add_output":
            outputs.append(_digest(f"out({resolved})"))
            continue
        if call == "ops.cast" and operands and len(targets) == 1:
            source = operands[0]
            known = dtypes.get(source)
            if known == target_dtype or (target_dtype == "Index" and known in (None, "Int", "Index")):
                values[targets[0]] = values[source]  # a no-op cast: the value is its operand
                dtypes[targets[0]] = known if known is not None else target_dtype
                continue
        if statement.is_input:
            node = f"input{inputs}:{call}({resolved})"
            inputs += 1
        else:
            node = f"{call}({resolved})"
        for position, target in enumerate(targets):
            values[target] = _digest(f"{node}#{position}")
            if target_dtype is not None:
                dtypes[target] = target_dtype
            elif call in _PRESERVES_DTYPE and operands:
                dtypes[target] = dtypes.get(operands[0])
            else:
                dtypes[target] = target_dtype
    return _digest("|".join(outputs))


@dataclass(frozen=True)
class DefinitionCall:
    """One statement of a printed definition: ``targets = fd.<op>(...)``."""

    targets: tuple[str, ...]
    """The plain names assigned (none for ``fd.add_output(...)`` or a tuple unpacking)."""
    op: str | None
    """``ops.add`` for ``fd.ops.add``, ``define_tensor`` for ``fd.define_tensor``; None when the call
    is not on ``fd``."""
    call: ast.Call


def definition_calls(definition: str) -> list[DefinitionCall]:
    """The call statements of the first function a printed definition defines, in order; empty
    when the text does not parse (nested past the parser's stack included: the parser says so with
    a MemoryError or RecursionError) or defines no function."""
    try:
        module = ast.parse(definition)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    function = next((n for n in module.body if isinstance(n, ast.FunctionDef)), None)
    if function is None:
        return []
    calls = []
    for stmt in function.body:
        call = stmt.value if isinstance(stmt, (ast.Assign, ast.Expr)) else None
        if isinstance(call, ast.Call):
            names = stmt.targets if isinstance(stmt, ast.Assign) else []
            targets = tuple(t.id for t in names if isinstance(t, ast.Name))
            calls.append(DefinitionCall(targets, fd_op_name(call.func), call))
    return calls


def fd_op_name(func: ast.expr) -> str | None:
    """``ops.add`` for ``fd.ops.add``, ``define_tensor`` for ``fd.define_tensor``, else None."""
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not (isinstance(func, ast.Name) and func.id == "fd"):
        return None
    return ".".join(reversed(parts))
