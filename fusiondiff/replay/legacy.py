"""Translate repro scripts of the legacy nvFuser frontends (``from nvfuser import ...``, 2023-2026)
to ``nvfuser_direct``.

nvFuser 0.2.36 ships only the direct bindings, but bug reports carry scripts in whatever frontend
was current when they were written. This module rewrites what changed (the rules and the commits
they were read from are in :mod:`fusiondiff.replay.legacy_rules`) and refuses, in one line naming
each construct, its line and what to do, what has no direct counterpart.

The rewrites are found with :mod:`ast` and applied to the source text node by node (each rewritten
node is replaced by ``ast.unparse`` of its translation), so everything else, comments and the
versions header included, stays byte for byte as written. Pure text, no torch: runs anywhere.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from fusiondiff.errors import ReplayError
from fusiondiff.replay import legacy_rules as rules

LEGACY_MODULE = "nvfuser"
DIRECT_MODULE = "nvfuser_direct"

MISSING_IN_DIRECT = frozenset(key.removeprefix("ops.") for key in rules.NO_EQUIVALENT if key.startswith("ops."))
"""Legacy ``fd.ops`` functions that ``nvfuser_direct`` does not have and that cannot be rewritten."""

_TRANSLATED_OPS = frozenset({"add_alpha", "sub_alpha", "tensor_sizes", "at"})
"""Legacy ``fd.ops`` functions missing in direct that :class:`_Rewriter` rewrites into direct ops."""

_DEFINES = {"define_tensor": "tensor", "from_pytorch": "tensor", "define_scalar": "scalar", "define_constant": "scalar"}


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
    rewriter = _Rewriter(source)
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


@dataclass(frozen=True)
class _Edit:
    span: tuple[int, int, int, int]
    """(line, column, end line, end column) of the original node; columns in UTF-8 bytes, as ast."""
    text: str
    description: str


@dataclass
class _Scope:
    """What a function body (or the module) binds to nvFuser objects."""

    values: dict[str, tuple[str | None, str]] = field(default_factory=dict)
    """Names of nvFuser values -> (source of the FusionDefinition that made them, 'tensor'/'scalar'/'')."""
    definitions: set[str] = field(default_factory=set)
    """Names bound to a FusionDefinition."""
    caches: set[str] = field(default_factory=set)
    """Names bound to ``FusionCache.get()``."""


class _Rewriter(ast.NodeTransformer):
    """Collects the edits a legacy script needs, in source order; children are visited first, so an
    edit's new node already holds its children's translations."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.edits: list[_Edit] = []
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
        self.scopes: list[_Scope] = [_Scope()]

    # ---------------------------------------------------------------- recording

    def _edit(self, old: ast.AST, new: ast.AST, what: str | None = None) -> ast.AST:
        ast.copy_location(new, old)
        if what is None:
            # The original text: `old` already holds its children's translations.
            what = f"{_short(ast.get_source_segment(self.source, old) or '')} -> {_short(ast.unparse(new))}"
        span = (old.lineno, old.col_offset, old.end_lineno, old.end_col_offset)  # type: ignore[attr-defined]
        self.edits.append(_Edit(span, ast.unparse(new), f"line {old.lineno}: {what}"))  # type: ignore[attr-defined]
        return new

    def _refuse(self, kind: str, node: ast.AST, construct: str | None = None) -> None:
        text = construct or _short(ast.get_source_segment(self.source, node) or ast.unparse(node), 60)
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
        scope = _Scope()
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

    # ---------------------------------------------------------------- names and operators

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load):
            return self._legacy_reference(node)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if self._legacy_name(node) is not None:
            return self._legacy_reference(node)
        receiver = self._ops_receiver(node)
        if receiver is not None and node.attr not in rules.DIRECT_OPS and node.attr not in _TRANSLATED_OPS:
            if f"ops.{node.attr}" in rules.NO_EQUIVALENT:
                self._refuse(f"ops.{node.attr}", node)
            else:
                self.unknown_ops.append(("unknown op", _short(ast.unparse(node), 60), node.lineno))
        return node

    def _legacy_reference(self, node: ast.Name | ast.Attribute) -> ast.AST:
        """A use of ``nvfuser.X`` (or of ``X`` imported from it) in an expression."""
        name = self._legacy_name(node)
        if name in rules.NAMES and isinstance(node, ast.Attribute):
            return self._edit(node, ast.Attribute(value=node.value, attr=rules.NAMES[name], ctx=ast.Load()))
        if name == "Vector":
            return self._edit(node, ast.Name(id="list", ctx=ast.Load()))
        if name == "compute_contiguity":
            self._refuse("compute_contiguity", node)
        elif name in rules.DROPPED_NAMES:
            self._refuse("FusionCache", node)
        return node

    def _operator(self, node: ast.AST, op: str, operands: list[ast.expr]) -> ast.AST:
        found = [v for v in (self._value(o) for o in operands) if v is not None]
        if not found:
            return node
        receiver = next((v[0] for v in found if v[0] is not None), None)
        if receiver is None:
            self._refuse("operator", node)
            return node
        call = ast.Call(func=_attr(ast.parse(receiver, mode="eval").body, "ops", op), args=operands, keywords=[])
        return self._edit(node, call)

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        op = rules.OPERATORS.get(type(node.op).__name__)
        return node if op is None else self._operator(node, op, [node.left, node.right])

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        op = rules.OPERATORS.get(type(node.op).__name__)
        return node if op is None else self._operator(node, op, [node.operand])

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        op = rules.OPERATORS.get(type(node.ops[0]).__name__) if len(node.ops) == 1 else None
        return node if op is None else self._operator(node, op, [node.left, node.comparators[0]])

    # ---------------------------------------------------------------- calls

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Name) and func.id == "abs" and len(node.args) == 1 and not node.keywords:
            return self._operator(node, "abs", list(node.args))
        if self._is_fusion_definition_class(func):
            return self._fusion_definition(node)
        if not isinstance(func, ast.Attribute):
            return node
        receiver = self._ops_receiver(func)
        if receiver is not None:
            return self._op(node, func.attr, receiver)
        return self._method(node, func.attr, func.value)

    def _fusion_definition(self, node: ast.Call) -> ast.AST:
        """``FusionDefinition(...)``: direct's takes no arguments."""
        args, keywords = list(node.args), list(node.keywords)
        if len(args) == 1 and self._is_cache(args[0]):
            args = []  # FusionDefinition(fc): the cache is implicit
        elif args:
            self._refuse("FusionDefinition(id)", node)
            return node
        for kw in node.keywords:
            if kw.arg == "use_multidevice_executor" and not _is_constant(kw.value, False):
                self._refuse("FusionDefinition(use_multidevice_executor=...)", node)
                return node
            if kw.arg == "id" and not _is_constant(kw.value, None):
                self._refuse("FusionDefinition(id)", node)
                return node
            if kw.arg in ("id", "max_length", "use_multidevice_executor", "backend_type"):
                keywords.remove(kw)
        if args == node.args and keywords == node.keywords:
            return node
        return self._edit(node, ast.Call(func=node.func, args=args, keywords=keywords))

    def _op(self, node: ast.Call, name: str, receiver: ast.expr) -> ast.AST:
        """``fd.ops.<name>(...)``."""
        args, keywords = list(node.args), _renamed_keywords(f"ops.{name}", node.keywords)
        kw = {k.arg: k for k in keywords}

        def op(op_name: str, *op_args: ast.expr) -> ast.Call:
            return ast.Call(func=_attr(receiver, "ops", op_name), args=list(op_args), keywords=[])

        if name in ("add_alpha", "sub_alpha") and len(args) == 3 and not keywords:
            # nvFuser's add_alpha(a, b, s) builds add(a, mul(b, s)) (csrc/ops/arith.cpp)
            return self._edit(node, op(name[:3], args[0], op("mul", args[1], args[2])))
        if name == "tensor_sizes":
            # TensorSizesRecord called shape(arg): the same list of extents
            return self._edit(node, ast.Call(func=_attr(receiver, "ops", "shape"), args=args, keywords=keywords))
        if name == "at" and len(args) == 2 and not keywords:
            # at(vector, i) was vector[i] (AtOpRecord); direct's shape is a plain list
            return self._edit(node, ast.Subscript(value=args[0], slice=args[1], ctx=ast.Load()))
        if name in ("rand_like", "randn_like") and ({"rng_seed", "rng_offset"} & set(kw) or len(args) > 1):
            self._refuse("rand_like seed", node)
            return node
        if name in ("reshape", "squeeze"):
            # reshape(arg, original_shape, new_shape) until 9ccce29ab (2023-10-12);
            # squeeze(arg, original_shape, dims) until 61b0ab626 (2024-01-09)
            last = "new_shape" if name == "reshape" else "dims"
            if "original_shape" in kw:
                keywords.remove(kw["original_shape"])
            elif len(args) == 3 and (name == "reshape" or isinstance(args[2], (ast.List, ast.Tuple))):
                del args[1]
            elif len(args) == 2 and last in kw:
                del args[1]
        if name == "full" and len(args) == 1 and "shape" in kw and "fill_value" not in kw:
            # nvFuser 2023-03..08 printed full as full(S, shape=[..], dtype=..)
            keywords.insert(0, ast.keyword(arg="fill_value", value=args.pop()))
        if name in ("uniform", "normal") and len(args) == 4:
            # dtype was the 4th positional argument until e30b6bbc3 (2023-11-15); keyword-only since
            keywords.append(ast.keyword(arg="dtype", value=args.pop()))
        if (
            name == "sdpfa_fwd"
            and 4 <= len(args) <= 6
            and not {"bias", "mask"} & set(kw)
            and self._scalar_like(args[3])
        ):
            # (query, key, value, dropout_p, is_causal, scale) from ef611eaf3 (2024-08-06) until bias and
            # mask came before dropout_p in 1db87d170 (2026-01-05); printed definitions passed all 6
            names = ("dropout_p", "is_causal", "scale")
            keywords = [ast.keyword(arg=n, value=v) for n, v in zip(names, args[3:], strict=False)] + keywords
            del args[3:]
        if args == node.args and keywords == node.keywords:
            return node
        return self._edit(node, ast.Call(func=node.func, args=args, keywords=keywords))

    def _scalar_like(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return True
        found = self._value(node)
        return found is not None and found[1] == "scalar"

    def _method(self, node: ast.Call, name: str, receiver: ast.expr) -> ast.AST:
        """``<receiver>.<name>(...)``: FusionDefinition methods, and uses of a FusionCache."""
        func = node.func
        assert isinstance(func, ast.Attribute)
        if self._is_cache(receiver):
            self._refuse("FusionCache", node)
            return node
        args, keywords = list(node.args), _renamed_keywords(name, node.keywords)
        if name in rules.RENAMED_METHODS:
            func = ast.Attribute(value=receiver, attr=rules.RENAMED_METHODS[name], ctx=ast.Load())
        elif name == "define_vector":
            values = args[0] if len(args) == 1 else None
            if isinstance(values, (ast.List, ast.Tuple)):
                # direct takes plain lists of ints and scalars wherever legacy took a Vector
                return self._edit(node, ast.List(elts=list(values.elts), ctx=ast.Load()))
            # define_vector(size, dtype=DataType.Int) (329aafed2, 2023-06-05): direct's takes a size only
            keywords = [k for k in keywords if k.arg != "dtype"]
        elif name == "add_output":
            order = next((k.value for k in keywords if k.arg == "stride_order"), None)
            if order is None and len(args) == 2 and isinstance(args[1], (ast.List, ast.Tuple)):
                order = args.pop()  # add_output(T, [2, 1, 0]): the stride_order overload
            if order is not None and args:
                keywords = [k for k in keywords if k.arg != "stride_order"]
                args[0] = ast.Call(func=_attr(receiver, "ops", "stride_order"), args=[args[0], order], keywords=[])
        elif name == "execute":
            keywords = [k for k in keywords if k.arg not in rules.EXECUTE_DROPPED]
        elif name in rules.INTROSPECTION:
            chain, dropped = rules.INTROSPECTION[name]
            func = _attr(receiver, *chain.split("."))
            keywords = [k for k in keywords if k.arg not in dropped]
        elif name in ("last_cuda_code", "debug_output") or (
            name in ("profile", "id") and self._is_definition(receiver)
        ):
            self._refuse(name, node, f"fd.{name}()")
            return node
        if func is node.func and args == node.args and keywords == node.keywords:
            return node
        return self._edit(node, ast.Call(func=func, args=args, keywords=keywords))


def _renamed(alias: ast.alias) -> list[ast.alias]:
    """The direct import for one name imported from ``nvfuser``, keeping the name the script uses;
    none for a name direct lacks (its uses are translated or refused where they are)."""
    if alias.name in rules.DROPPED_NAMES:
        return []
    direct = rules.SUBMODULES.get(alias.name) or rules.NAMES.get(alias.name) or alias.name
    return [alias if direct == alias.name else ast.alias(direct, alias.asname or alias.name)]


def _renamed_keywords(call: str, keywords: list[ast.keyword]) -> list[ast.keyword]:
    renames = {r.old: r.new for r in rules.KEYWORD_RENAMES if r.call == call}
    return [ast.keyword(arg=renames[k.arg], value=k.value) if k.arg in renames else k for k in keywords]


def _attr(base: ast.expr, *names: str) -> ast.expr:
    for name in names:
        base = ast.Attribute(value=base, attr=name, ctx=ast.Load())
    return base


def _is_constant(node: ast.expr, value: object) -> bool:
    return isinstance(node, ast.Constant) and node.value is value


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


def _deletions(tree: ast.Module, deleted: list[ast.stmt], source: str) -> list[_Edit]:
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
        segment = _short(ast.get_source_segment(source, stmt) or "")
        edits.append(_Edit(span, text, f"line {stmt.lineno}: {segment} -> {text or '(removed)'}"))
    return edits


def _same_lines(edit: _Edit) -> str:
    """The edit's text spread over as many lines as the text it replaces (inside its closing bracket
    when it has one), so every line of the script keeps its number: errors name the user's lines."""
    missing = edit.span[2] - edit.span[0] - edit.text.count("\n")
    if missing <= 0:
        return edit.text
    if edit.text.endswith((")", "]")):
        return edit.text[:-1] + "\n" * missing + edit.text[-1]
    return edit.text + "\n" * missing


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
