"""Translate 2024-2025 repro scripts (``from nvfuser import ...``) to ``nvfuser_direct``.

nvFuser 0.2.36 ships only the direct bindings, but bug reports carry scripts in the legacy syntax.
Most of a legacy script runs unchanged under ``nvfuser_direct``; this module rewrites the few
constructs that do not, and refuses, in one line naming each, the ops that have no direct
counterpart.

The rewrites are found with :mod:`ast` and applied to the source text node by node (each rewritten
node is replaced by ``ast.unparse`` of its translation), so everything else, comments and the
versions header included, stays byte for byte as written. Pure text, no torch: runs anywhere.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from fusiondiff.errors import ReplayError

LEGACY_MODULE = "nvfuser"
DIRECT_MODULE = "nvfuser_direct"

MISSING_IN_DIRECT = frozenset(
    {"add_alpha", "sub_alpha", "batch_norm", "index_put_accumulate", "tensor_sizes", "at"}
)
"""Legacy ``fd.ops`` functions that ``nvfuser_direct`` does not have."""

_SUBMODULES = {
    "pytorch_utils": "pytorch_utils",
    "benchmark_utils": "benchmark_utils",
    "nvfuser_version": "nvfuser_direct_version",
}
"""Legacy submodules with a direct counterpart; any other ``nvfuser.<sub>`` cannot be translated."""


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

    Imports of ``nvfuser`` go to ``nvfuser_direct``; ``fd.define_vector([a, b])`` becomes the plain
    list ``[a, b]``; ``fd.add_output(T, stride_order=S)`` becomes
    ``fd.add_output(fd.ops.stride_order(T, S))``. A script already in direct syntax comes back
    unchanged. Raises :class:`ReplayError` (one line) when the script is not valid Python or uses
    ops that ``nvfuser_direct`` lacks, naming every such op and its lines.
    """
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise ReplayError(f"{filename} is not valid Python: {exc.msg} (line {exc.lineno})") from None
    rewriter = _Rewriter(source)
    rewriter.visit(tree)
    if rewriter.untranslatable:
        listed = _list_untranslatable(rewriter.untranslatable)
        raise ReplayError(f"cannot translate legacy ops for {DIRECT_MODULE}: {listed}")
    if not rewriter.edits:
        return Translation(source=source, is_legacy=False)
    starts = _line_starts(source)
    edits = _outermost(rewriter.edits)
    out = source
    # Apply from the end so earlier offsets stay valid.
    for edit in sorted(edits, key=lambda e: e.span, reverse=True):
        begin = _offset(source, starts, edit.span[0], edit.span[1])
        end = _offset(source, starts, edit.span[2], edit.span[3])
        out = out[:begin] + ast.unparse(edit.new) + out[end:]
    changes = tuple(e.description for e in sorted(rewriter.edits, key=lambda e: e.span))
    return Translation(source=out, is_legacy=True, changes=changes)


@dataclass(frozen=True)
class _Edit:
    span: tuple[int, int, int, int]
    """(line, column, end line, end column) of the original node; columns in UTF-8 bytes, as ast."""
    new: ast.AST
    description: str


class _Rewriter(ast.NodeTransformer):
    """Collects the edits a legacy script needs; children are visited first, so an edit's new node
    already holds its children's translations."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.edits: list[_Edit] = []
        self.untranslatable: list[tuple[str, int]] = []

    def _edit(self, old: ast.AST, new: ast.AST, what: str | None = None) -> ast.AST:
        ast.copy_location(new, old)
        if what is None:
            # The original text: `old` already holds its children's translations.
            what = f"{_short(ast.get_source_segment(self.source, old) or '')} -> {_short(ast.unparse(new))}"
        span = (old.lineno, old.col_offset, old.end_lineno, old.end_col_offset)  # type: ignore[attr-defined]
        self.edits.append(_Edit(span, new, f"line {old.lineno}: {what}"))  # type: ignore[attr-defined]
        return new

    def visit_Import(self, node: ast.Import) -> ast.AST:
        names: list[ast.alias] = []
        changed = []
        for alias in node.names:
            if alias.name == LEGACY_MODULE:
                # Keep the name the script uses, so `nvfuser.DataType` still resolves.
                names.append(ast.alias(DIRECT_MODULE, alias.asname or LEGACY_MODULE))
            elif alias.name.startswith(LEGACY_MODULE + "."):
                direct = self._submodule(alias.name, node.lineno)
                if direct is None:
                    names.append(alias)
                    continue
                names.append(ast.alias(direct, alias.asname))
                if alias.asname is None:
                    # `import nvfuser.x` also binds `nvfuser`; bind it to the direct package.
                    names.append(ast.alias(DIRECT_MODULE, LEGACY_MODULE))
            else:
                names.append(alias)
                continue
            changed.append(alias)
        if not changed:
            return node
        new = ast.Import(names=names)
        return self._edit(node, new)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        module = node.module or ""
        if node.level or not (module == LEGACY_MODULE or module.startswith(LEGACY_MODULE + ".")):
            return node
        direct = DIRECT_MODULE if module == LEGACY_MODULE else self._submodule(module, node.lineno)
        if direct is None:
            return node
        names = [_renamed(a) for a in node.names] if direct == DIRECT_MODULE else node.names
        new = ast.ImportFrom(module=direct, names=names, level=0)
        return self._edit(node, new, f"from {module} import -> from {direct} import")

    def _submodule(self, dotted: str, line: int) -> str | None:
        sub = dotted.split(".", 2)[1]
        if sub not in _SUBMODULES:
            self.untranslatable.append((dotted, line))
            return None
        return ".".join([DIRECT_MODULE, _SUBMODULES[sub], *dotted.split(".")[2:]])

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if node.attr in MISSING_IN_DIRECT and isinstance(node.value, ast.Attribute) and node.value.attr == "ops":
            self.untranslatable.append((ast.unparse(node), node.lineno))
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        if not isinstance(func, ast.Attribute):
            return node
        values = node.args[0] if len(node.args) == 1 else None
        if func.attr == "define_vector" and isinstance(values, (ast.List, ast.Tuple)):
            # Direct takes plain lists of ints and scalars wherever legacy took a Vector; its
            # define_vector(size) exists but only in the input form, so an int size is left as is.
            new = ast.List(elts=list(values.elts), ctx=ast.Load())
            return self._edit(node, new)
        if func.attr == "add_output" and any(k.arg == "stride_order" for k in node.keywords) and node.args:
            order = next(k.value for k in node.keywords if k.arg == "stride_order")
            others = [k for k in node.keywords if k.arg != "stride_order"]
            ops = ast.Attribute(value=func.value, attr="ops", ctx=ast.Load())
            strided = ast.Call(func=ast.Attribute(value=ops, attr="stride_order", ctx=ast.Load()),
                               args=[node.args[0], order], keywords=[])
            new = ast.Call(func=func, args=[strided, *node.args[1:]], keywords=others)
            return self._edit(node, new)
        return node


def _renamed(alias: ast.alias) -> ast.alias:
    """``from nvfuser import nvfuser_version`` names a submodule that direct renamed: keep the name."""
    direct = _SUBMODULES.get(alias.name, alias.name)
    return alias if direct == alias.name else ast.alias(direct, alias.asname or alias.name)


def _outermost(edits: list[_Edit]) -> list[_Edit]:
    """Drop edits inside another edit: the outer one's new node already carries them."""

    def inside(a: _Edit, b: _Edit) -> bool:
        return a is not b and b.span[:2] <= a.span[:2] and a.span[2:] <= b.span[2:]

    return [e for e in edits if not any(inside(e, other) for other in edits)]


def _line_starts(source: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer("\n", source)]


def _offset(source: str, starts: list[int], line: int, col_bytes: int) -> int:
    """String index of an ast position (ast counts columns in UTF-8 bytes)."""
    begin = starts[line - 1]
    end = starts[line] if line < len(starts) else len(source)
    return begin + len(source[begin:end].encode()[:col_bytes].decode())


def _short(text: str, limit: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _list_untranslatable(found: list[tuple[str, int]]) -> str:
    lines: dict[str, list[int]] = {}
    for name, line in found:
        lines.setdefault(name, []).append(line)
    parts = []
    for name, where in sorted(lines.items(), key=lambda item: min(item[1])):
        nums = sorted(set(where))
        parts.append(f"{name} ({'line' if len(nums) == 1 else 'lines'} {', '.join(map(str, nums))})")
    return ", ".join(parts)
