"""What the names of a legacy nvFuser script refer to, and its imports rewritten for ``nvfuser_direct``.

:class:`ScopeTracker` walks a script's syntax tree (:mod:`ast`) and knows, at each node, which names
are bound to a ``FusionDefinition``, a ``FusionCache`` or an nvFuser value (tensor or scalar), and
which come from the ``nvfuser`` module; it rewrites the imports and records each rewrite as an
:class:`Edit`. :class:`fusiondiff.replay.legacy_rewrite.Rewriter` builds on it to rewrite the
expressions, and :func:`fusiondiff.replay.legacy.translate_legacy` applies the edits to the text.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from fusiondiff.replay import legacy_rules as rules

LEGACY_MODULE = "nvfuser"
DIRECT_MODULE = "nvfuser_direct"

_DEFINES = {"define_tensor": "tensor", "from_pytorch": "tensor", "define_scalar": "scalar", "define_constant": "scalar"}


@dataclass(frozen=True)
class Edit:
    """One rewrite: the span of the original node, its new text, and a line describing it."""

    span: tuple[int, int, int, int]
    """(line, column, end line, end column) of the original node; columns in UTF-8 bytes, as ast."""
    text: str
    description: str


@dataclass
class Scope:
    """What a function body (or the module) binds to nvFuser objects."""

    values: dict[str, tuple[str | None, str]] = field(default_factory=dict)
    """Names of nvFuser values -> (source of the FusionDefinition that made them, 'tensor'/'scalar'/'')."""
    definitions: set[str] = field(default_factory=set)
    """Names bound to a FusionDefinition."""
    caches: set[str] = field(default_factory=set)
    """Names bound to ``FusionCache.get()``."""


class ScopeTracker(ast.NodeTransformer):
    """Collects the edits a legacy script needs, in source order; children are visited first, so an
    edit's new node already holds its children's translations. This part tracks names, scopes and
    imports; :class:`~fusiondiff.replay.legacy_rewrite.Rewriter` adds the expressions."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.edits: list[Edit] = []
        self.deleted: list[ast.stmt] = []
        self.refused: list[tuple[str, str, int]] = []
        """(kind in rules.NO_EQUIVALENT, construct as the message names it, line)."""
        self.unknown_ops: list[tuple[str, str, int]] = []
        """``fd.ops`` names that direct lacks; refused only when the script imports ``nvfuser``."""
        self.saw_legacy = False
        self.legacy_names: dict[str, str] = {}
        """Local name -> name in ``nvfuser`` (``from nvfuser import X as local``)."""
        self.star_import = False
        self.legacy_aliases: set[str] = set()
        """Local names bound to the ``nvfuser`` module."""
        self.modules: set[str] = set()
        """Every local name bound to an imported module (``torch``, ``np``...): never a FusionDefinition."""
        self.scopes: list[Scope] = [Scope()]

    # ---------------------------------------------------------------- recording

    def _edit(self, old: ast.AST, new: ast.AST, what: str | None = None) -> ast.AST:
        ast.copy_location(new, old)
        if what is None:
            # The original text: `old` already holds its children's translations.
            what = f"{short_text(ast.get_source_segment(self.source, old) or '')} -> {short_text(ast.unparse(new))}"
        span = (old.lineno, old.col_offset, old.end_lineno, old.end_col_offset)  # type: ignore[attr-defined]
        self.edits.append(Edit(span, ast.unparse(new), f"line {old.lineno}: {what}"))  # type: ignore[attr-defined]
        return new

    def _refuse(self, kind: str, node: ast.AST, construct: str | None = None) -> None:
        text = construct or short_text(ast.get_source_segment(self.source, node) or ast.unparse(node), 60)
        self.refused.append((kind, text, node.lineno))  # type: ignore[attr-defined]

    def _delete(self, node: ast.stmt) -> ast.stmt:
        self.deleted.append(node)
        return node

    # ---------------------------------------------------------------- what names refer to

    def _legacy_name(self, node: ast.AST) -> str | None:
        """The ``nvfuser`` attribute an expression names (``FusionCache``, ``nvfuser.Tensor``...)."""
        if isinstance(node, ast.Name):
            if node.id in self.legacy_names:
                return self.legacy_names[node.id]
            if self.star_import and node.id in rules.DROPPED_NAMES | set(rules.NAMES) | {"FusionDefinition"}:
                return node.id
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in self.legacy_aliases
        ):
            return node.attr
        return None

    def _is_fusion_definition_class(self, node: ast.AST) -> bool:
        return _name_of(node) == "FusionDefinition" or self._legacy_name(node) == "FusionDefinition"

    def _is_fusion_cache_call(self, node: ast.AST, *methods: str) -> bool:
        """``FusionCache.<method>(...)`` for one of ``methods``."""
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in methods
            and self._legacy_name(node.func.value) == "FusionCache"
        )

    def _lookup(self, name: str) -> tuple[str | None, str] | None:
        for scope in reversed(self.scopes):
            if name in scope.values:
                return scope.values[name]
        return None

    def _is_definition(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Name) and any(node.id in s.definitions for s in self.scopes)

    def _is_cache(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Name) and any(node.id in s.caches for s in self.scopes)

    def _ops_receiver(self, func: ast.Attribute) -> ast.expr | None:
        """``fd`` in ``fd.ops.<name>``, unless the root is an imported module (``torch.ops.aten``)."""
        if not (isinstance(func.value, ast.Attribute) and func.value.attr == "ops"):
            return None
        root: ast.expr = func.value.value
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in self.modules:
            return None
        return func.value.value

    def _value(self, node: ast.AST) -> tuple[str | None, str] | None:
        """(FusionDefinition source, kind) when ``node`` evaluates to an nvFuser value, else None."""
        if isinstance(node, ast.Name):
            return self._lookup(node.id)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            receiver = self._ops_receiver(node.func)
            if receiver is not None:
                return ast.unparse(receiver), ""
            if node.func.attr in _DEFINES:
                return ast.unparse(node.func.value), _DEFINES[node.func.attr]
        if isinstance(node, ast.Subscript):
            found = self._value(node.value)
            return (found[0], "") if found else None
        return None

    def _bind(self, target: ast.AST, value: tuple[str | None, str] | None) -> None:
        names = [target] if isinstance(target, ast.Name) else getattr(target, "elts", [])
        for name in names:
            if not isinstance(name, ast.Name):
                continue
            if value is None:
                self.scopes[-1].values.pop(name.id, None)
            else:
                # a tuple-returning op (var_mean, sdpfa_fwd) makes values of unknown kind
                self.scopes[-1].values[name.id] = value if isinstance(target, ast.Name) else (value[0], "")

    # ---------------------------------------------------------------- imports

    def visit_Import(self, node: ast.Import) -> ast.AST:
        names: list[ast.alias] = []
        changed = []
        for alias in node.names:
            self.modules.add((alias.asname or alias.name).split(".")[0])
            if alias.name == LEGACY_MODULE:
                # Keep the name the script uses, so `nvfuser.DataType` still resolves.
                names.append(ast.alias(DIRECT_MODULE, alias.asname or LEGACY_MODULE))
                self.legacy_aliases.add(alias.asname or LEGACY_MODULE)
            elif alias.name.startswith(LEGACY_MODULE + "."):
                direct = self._submodule(alias.name, node)
                if direct is None:
                    names.append(alias)
                    continue
                names.append(ast.alias(direct, alias.asname))
                if alias.asname is None:
                    # `import nvfuser.x` also binds `nvfuser`; bind it to the direct package.
                    names.append(ast.alias(DIRECT_MODULE, LEGACY_MODULE))
                    self.legacy_aliases.add(LEGACY_MODULE)
            else:
                names.append(alias)
                continue
            changed.append(alias)
        if not changed:
            return node
        self.saw_legacy = True
        return self._edit(node, ast.Import(names=names))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        module = node.module or ""
        if node.level or not (module == LEGACY_MODULE or module.startswith(LEGACY_MODULE + ".")):
            return node
        self.saw_legacy = True
        direct = DIRECT_MODULE if module == LEGACY_MODULE else self._submodule(module, node)
        if direct is None:
            return node
        names = node.names
        if direct == DIRECT_MODULE:
            names = []
            for alias in node.names:
                self.star_import |= alias.name == "*"
                self.legacy_names[alias.asname or alias.name] = alias.name
                names.extend(_renamed(alias))
        if not names:
            return self._delete(node)
        new = ast.ImportFrom(module=direct, names=names, level=0)
        dropped = [a.name for a in node.names if a.name in rules.DROPPED_NAMES]
        what = f"from {module} import -> from {direct} import" + (
            f" (dropped: {', '.join(dropped)})" if dropped else ""
        )
        return self._edit(node, new, what)

    def _submodule(self, dotted: str, node: ast.AST) -> str | None:
        sub = dotted.split(".", 2)[1]
        if sub not in rules.SUBMODULES:
            self._refuse("submodule", node, dotted)
            return None
        return ".".join([DIRECT_MODULE, rules.SUBMODULES[sub], *dotted.split(".")[2:]])

    # ---------------------------------------------------------------- scopes and statements

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        scope = Scope()
        arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        for arg in arguments:
            annotation = _unquote(arg.annotation) if arg.annotation is not None else None
            if arg.arg == "fd" or (annotation is not None and self._is_fusion_definition_class(annotation)):
                scope.definitions.add(arg.arg)
        receiver = next(iter(sorted(scope.definitions)), None)
        for arg in arguments:
            kind = _annotated_kind(_unquote(arg.annotation)) if arg.annotation is not None else None
            if kind is not None:
                scope.values[arg.arg] = (receiver, kind)
        self.scopes.append(scope)
        self.generic_visit(node)
        self.scopes.pop()
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        hooks = {n.name for n in node.body if isinstance(n, ast.FunctionDef)} & {"definition", "schedule"}
        if any(self._is_fusion_definition_class(base) for base in node.bases) and hooks:
            with_hooks = " and ".join(f"{hook}()" for hook in sorted(hooks))
            self._refuse("FusionDefinition subclass", node, f"class {node.name}(FusionDefinition) with {with_hooks}")
            return node
        return self.generic_visit(node)

    def visit_With(self, node: ast.With) -> ast.AST:
        for item in node.items:
            self.visit(item)
            call, name = item.context_expr, item.optional_vars
            if (
                isinstance(call, ast.Call)
                and self._is_fusion_definition_class(call.func)
                and isinstance(name, ast.Name)
            ):
                self.scopes[-1].definitions.add(name.id)
        node.body = [self.visit(stmt) for stmt in node.body]
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        call = node.value
        if isinstance(call, ast.Call) and self._legacy_name(call.func) in rules.NO_OP_CALLS:
            return self._delete(node)
        if self._is_fusion_cache_call(call, "get", "reset"):
            return self._delete(node)
        return self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        if self._is_fusion_cache_call(node.value, "get") and all(isinstance(t, ast.Name) for t in node.targets):
            self.scopes[-1].caches.update(t.id for t in node.targets)  # type: ignore[attr-defined]
            return self._delete(node)
        self.generic_visit(node)
        makes_definition = isinstance(node.value, ast.Call) and self._is_fusion_definition_class(node.value.func)
        for target in node.targets:
            if makes_definition and isinstance(target, ast.Name):
                self.scopes[-1].definitions.add(target.id)
            self._bind(target, self._value(node.value))
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        self.generic_visit(node)
        if node.value is not None:
            self._bind(node.target, self._value(node.value))
        return node


def _renamed(alias: ast.alias) -> list[ast.alias]:
    """The direct import for one name imported from ``nvfuser``, keeping the name the script uses;
    none for a name direct lacks (its uses are translated or refused where they are)."""
    if alias.name in rules.DROPPED_NAMES:
        return []
    direct = rules.SUBMODULES.get(alias.name) or rules.NAMES.get(alias.name) or alias.name
    return [alias if direct == alias.name else ast.alias(direct, alias.asname or alias.name)]


def _unquote(annotation: ast.expr | None) -> ast.expr:
    """A string annotation (``fd: "FusionDefinition"``) parsed; others as they are."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            return ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            pass
    return annotation  # type: ignore[return-value]


def _name_of(node: ast.AST) -> str | None:
    """``X`` of ``X`` or ``module.X``."""
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def _annotated_kind(annotation: ast.expr) -> str | None:
    """'tensor' or 'scalar' for a parameter annotated with a legacy or direct value class."""
    return {"Tensor": "tensor", "TensorView": "tensor", "Scalar": "scalar", "Val": "scalar"}.get(
        _name_of(annotation) or ""
    )


def short_text(text: str, limit: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
