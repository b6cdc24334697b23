"""The expressions of a legacy nvFuser script rewritten for ``nvfuser_direct``: ops whose names,
arguments or keywords changed, ops direct lacks written with the ops nvFuser built them from,
operators on nvFuser values as ``fd.ops`` calls, and ``FusionDefinition`` methods; what has no
direct counterpart is refused (:data:`fusiondiff.replay.legacy_rules.NO_EQUIVALENT`).
"""

from __future__ import annotations

import ast

from fusiondiff.replay import legacy_rules as rules
from fusiondiff.replay.legacy_scope import ScopeTracker, short_text

MISSING_IN_DIRECT = frozenset(key.removeprefix("ops.") for key in rules.NO_EQUIVALENT if key.startswith("ops."))
"""Legacy ``fd.ops`` functions that ``nvfuser_direct`` does not have and that cannot be rewritten."""

_TRANSLATED_OPS = frozenset({"add_alpha", "sub_alpha", "tensor_sizes", "at"})
"""Legacy ``fd.ops`` functions missing in direct that :class:`Rewriter` rewrites into direct ops."""


class Rewriter(ScopeTracker):
    """The edits a legacy script needs: its imports and names (:class:`ScopeTracker`), then its
    operators, ops and method calls."""

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
                self.unknown_ops.append(("unknown op", short_text(ast.unparse(node), 60), node.lineno))
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


def _renamed_keywords(call: str, keywords: list[ast.keyword]) -> list[ast.keyword]:
    renames = {r.old: r.new for r in rules.KEYWORD_RENAMES if r.call == call}
    return [ast.keyword(arg=renames[k.arg], value=k.value) if k.arg in renames else k for k in keywords]


def _attr(base: ast.expr, *names: str) -> ast.expr:
    for name in names:
        base = ast.Attribute(value=base, attr=name, ctx=ast.Load())
    return base


def _is_constant(node: ast.expr, value: object) -> bool:
    return isinstance(node, ast.Constant) and node.value is value
