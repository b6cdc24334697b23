"""Translate repro scripts of the legacy nvFuser frontends (``from nvfuser import ...``, 2023-2026)
to ``nvfuser_direct``.

nvFuser 0.2.36 ships only the direct bindings, but bug reports carry scripts in whatever frontend
was current when they were written. This module rewrites what changed (the rules and the commits
they were read from are in :mod:`fusiondiff.replay.legacy_rules`; the rewrites are found by
:mod:`.legacy_scope` for names and imports and :mod:`.legacy_rewrite` for expressions) and refuses,
in one line naming each construct, its line and what to do, what has no direct counterpart.

The rewrites are found with :mod:`ast` and applied to the source text node by node (each rewritten
node is replaced by ``ast.unparse`` of its translation), so everything else, comments and the
versions header included, stays byte for byte as written. Pure text, no torch: runs anywhere.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from fusiondiff.records.errors import ReplayError
from fusiondiff.replay import legacy_rules as rules
from fusiondiff.replay.legacy_rewrite import Rewriter
from fusiondiff.replay.legacy_scope import DIRECT_MODULE, Edit, short_text


@dataclass(frozen=True)
class Translation:
    """A script made runnable under ``nvfuser_direct``."""

    source: str
    """The translated script; the input itself when nothing needed translating."""
    is_legacy: bool
    """Whether the script used the legacy frontend (anything was rewritten)."""
    changes: tuple[str, ...] = ()
    """One human-readable line per rewrite, ``line N: old -> new``, in source order."""


def translate_legacy(source: str, filename: str = "<script>") -> Translation:
    """Rewrite a legacy nvFuser script for ``nvfuser_direct``.

    Imports of ``nvfuser`` go to ``nvfuser_direct``; renamed ops, keywords and methods get their
    direct names; removed arguments are dropped; ops and operators that direct lacks are written
    with the ops nvFuser built them from. A script already in direct syntax comes back unchanged.
    Raises :class:`ReplayError` (one line) when the script is not valid Python or uses constructs
    with no direct counterpart, naming each with its lines and what to do.
    """
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise ReplayError(f"{filename} is not valid Python: {exc.msg} (line {exc.lineno})") from None
    rewriter = Rewriter(source)
    rewriter.visit(tree)
    refused = rewriter.refused + (rewriter.unknown_ops if rewriter.saw_legacy else [])
    if refused:
        raise ReplayError(_refusal(refused))
    edits = rewriter.edits + _deletions(tree, rewriter.deleted, source)
    if not edits:
        return Translation(source=source, is_legacy=False)
    starts = _line_starts(source)
    out = source
    # Apply from the end so earlier offsets stay valid.
    for edit in sorted(_outermost(edits), key=lambda e: e.span, reverse=True):
        begin = _offset(source, starts, edit.span[0], edit.span[1])
        end = _offset(source, starts, edit.span[2], edit.span[3])
        out = out[:begin] + _same_lines(edit) + out[end:]
    changes = tuple(e.description for e in sorted(edits, key=lambda e: e.span))
    return Translation(source=out, is_legacy=True, changes=changes)


def _deletions(tree: ast.Module, deleted: list[ast.stmt], source: str) -> list[Edit]:
    """Edits that remove statements; a block left empty keeps a ``pass``."""
    if not deleted:
        return []
    gone = {id(s) for s in deleted}
    keep_pass: set[int] = set()
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and all(id(s) in gone for s in block):
                keep_pass.add(id(block[0]))
    edits = []
    for stmt in deleted:
        text = "pass" if id(stmt) in keep_pass else ""
        span = (stmt.lineno, stmt.col_offset, stmt.end_lineno or stmt.lineno, stmt.end_col_offset or 0)
        segment = short_text(ast.get_source_segment(source, stmt) or "")
        edits.append(Edit(span, text, f"line {stmt.lineno}: {segment} -> {text or '(removed)'}"))
    return edits


def _same_lines(edit: Edit) -> str:
    """The edit's text spread over as many lines as the text it replaces (inside its closing bracket
    when it has one), so every line of the script keeps its number: errors name the user's lines."""
    missing = edit.span[2] - edit.span[0] - edit.text.count("\n")
    if missing <= 0:
        return edit.text
    if edit.text.endswith((")", "]")):
        return edit.text[:-1] + "\n" * missing + edit.text[-1]
    return edit.text + "\n" * missing


def _outermost(edits: list[Edit]) -> list[Edit]:
    """Drop edits inside another edit: the outer one's new node already carries them."""

    def inside(a: Edit, b: Edit) -> bool:
        return a is not b and b.span[:2] <= a.span[:2] and a.span[2:] <= b.span[2:]

    return [e for e in edits if not any(inside(e, other) for other in edits)]


def _line_starts(source: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer("\n", source)]


def _offset(source: str, starts: list[int], line: int, col_bytes: int) -> int:
    """String index of an ast position (ast counts columns in UTF-8 bytes)."""
    begin = starts[line - 1]
    end = starts[line] if line < len(starts) else len(source)
    return begin + len(source[begin:end].encode()[:col_bytes].decode())


def _refusal(found: list[tuple[str, str, int]]) -> str:
    """One line: each construct, its lines and what to do, in source order."""
    lines: dict[tuple[str, str], list[int]] = {}
    for kind, construct, line in found:
        lines.setdefault((kind, construct), []).append(line)
    parts = []
    for (kind, construct), where in sorted(lines.items(), key=lambda item: min(item[1])):
        nums = sorted(set(where))
        named = f"{construct} ({'line' if len(nums) == 1 else 'lines'} {', '.join(map(str, nums))})"
        parts.append((named, rules.NO_EQUIVALENT[kind]))
    if len(parts) == 1:
        ((named, advice),) = parts
        return f"fusiondiff could not translate {named} to {DIRECT_MODULE}: {advice}"
    listed = "; ".join(f"{named}: {advice}" for named, advice in parts)
    return f"fusiondiff could not translate {len(parts)} constructs to {DIRECT_MODULE}: {listed}"
