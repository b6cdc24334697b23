"""What may go from a capture into a generated repro script, proven before it is written.

A capture is someone else's data, and ``fusiondiff repro`` turns it into a script that people run.
So nothing from a capture becomes code unless it is shown here to be what it claims to be:

- the definition is accepted only as ``def <name>(fd ...)`` whose statements are calls of ``fd``
  and ``fd.ops`` on literals and on names it defined before (:func:`check_definition`, on the
  syntax tree);
- every other string is a Python literal made with ``repr`` from a plain ``str`` that matches a
  strict pattern for what it claims to be (:func:`literal`, :func:`dtype_expression`);
- everything else is a one-line comment (:func:`comment_text`).

Each refusal is one :class:`ReplayError` line naming what was refused and where.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from typing import NoReturn

from fusiondiff.records.errors import ReplayError
from fusiondiff.records.escape import printable

FD = "fd"
"""The one parameter a definition takes: the ``FusionDefinition`` it fills."""
_DEFINITION_NAMES = frozenset({FD, "DataType", "float", "FusionDefinition"})
"""Names the script gives a meaning to; a definition may not rebind them."""
_NON_FINITE = frozenset({"inf", "-inf", "+inf", "nan"})
"""What ``float("...")`` may build in a definition: the values nvFuser prints that way."""
_CALLABLE_ATTR = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
"""``fd.<attr>`` and ``fd.ops.<attr>``: never a private or dunder name."""
_DATATYPE_ATTR = re.compile(r"[A-Z][A-Za-z0-9_]*")
_REFUSED = "not allowed in a definition"

_TORCH_DTYPE = re.compile(r"torch\.[a-z][a-z0-9_]*")
PATTERNS: dict[str, tuple[re.Pattern[str], str]] = {
    "device": (re.compile(r"(?:cpu|cuda|meta)(?::[0-9]{1,4})?"), "cpu, cuda or cuda:N"),
    "tensor key": (re.compile(r"[A-Za-z0-9_.:/-]{1,200}"), "letters, digits and _.:/-"),
    "option": (re.compile(r"[A-Za-z][A-Za-z0-9_]{0,99}"), "an nvFuser option name"),
    "variable": (re.compile(r"NVFUSER_[A-Z0-9_]{1,100}"), "NVFUSER_ and capitals, digits, _"),
}
"""What each kind of string from a capture must look like before it is written as a literal."""


def check_definition(text: str, where: str = "the definition") -> str:
    """Prove that ``text`` is a fusion definition and nothing else; returns the function's name.

    Accepted: ASCII text that parses to exactly one ``def <name>(fd)`` (annotated
    ``fd : FusionDefinition`` and ``-> None`` or not), without decorators or other parameters,
    whose statements are each an assignment to new names or an expression, of a call
    ``fd.<op>(...)`` or ``fd.ops.<op>(...)``. Their arguments are numbers, strings, ``True``,
    ``False``, ``None``, negated numbers, ``float("inf")``/``float("-inf")``/``float("nan")``,
    ``DataType.<Name>``, names assigned earlier in the function, calls of the same kind, and lists
    or tuples of these, positional or by keyword. Anything else raises :class:`ReplayError` naming
    the line (counted in ``text``) and the construct.
    """
    for number, line in enumerate(text.split("\n"), start=1):
        for ch in line:
            if not (" " <= ch <= "~" or ch == "\t"):
                raise ReplayError(f"{where}: line {number}: {_REFUSED}: character {ch!r} (nvFuser prints ASCII)")
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise ReplayError(f"{where}: line {exc.lineno}: not valid Python ({exc.msg})") from None
    except (RecursionError, MemoryError):
        raise ReplayError(f"{where}: nested too deeply to be a definition") from None
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    if not functions:
        raise ReplayError(f"{where} defines no function (expected `def nvfuser_fusion(fd : FusionDefinition)`)")
    for node in tree.body:
        if node is not functions[0]:
            what = "a second function" if isinstance(node, ast.FunctionDef) else _construct(node)
            _refuse(where, node, f"{what} outside the function")
    _check_function(functions[0], where)
    return functions[0].name


def literal(value: object, kind: str, where: str) -> str:
    """``repr(value)``, once ``value`` is shown to be a plain ``str`` that looks like a ``kind``
    (a key of :data:`PATTERNS`); else :class:`ReplayError`."""
    pattern, expected = PATTERNS[kind]
    if type(value) is not str or not pattern.fullmatch(value):
        raise ReplayError(f"{where}: {kind} {_shown(value)} is not allowed in a script (expected {expected})")
    return repr(value)


def literal_list(values: Iterable[object], kind: str, where: str) -> str:
    """A list literal of checked strings (see :func:`literal`)."""
    return "[" + ", ".join(literal(v, kind, where) for v in values) + "]"


def text_literal(value: object, where: str) -> str:
    """``repr(value)`` of a plain, printable ``str`` (an ``NVFUSER_*`` value, a file name)."""
    if type(value) is not str or not value.isprintable():
        raise ReplayError(f"{where}: {_shown(value)} is not plain printable text")
    return repr(value)


def dtype_expression(dtype: object, where: str) -> str:
    """``torch.<name>``, the only code (rather than a literal) written from a capture's strings."""
    if type(dtype) is not str or not _TORCH_DTYPE.fullmatch(dtype):
        raise ReplayError(f"{where} has dtype {_shown(dtype)}, not a torch dtype")
    return dtype


def comment_text(text: str) -> str:
    """``text`` made safe to follow ``#`` on one line: line breaks (``\\n``, a bare ``\\r``, the
    Unicode separators) and every other control character written as escapes, so nothing after
    them can become a line of code."""
    return printable(str(text))


# --------------------------------------------------------------------------------------------


def _check_function(node: ast.FunctionDef, where: str) -> None:
    if node.decorator_list:
        _refuse(where, node.decorator_list[0], "a decorator")
    args = node.args
    extra = args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg or args.defaults or args.kw_defaults
    if extra or [a.arg for a in args.args] != [FD]:
        _refuse(where, node, f"parameters other than `{FD}`")
    annotation = args.args[0].annotation
    if annotation is not None and not (isinstance(annotation, ast.Name) and annotation.id == "FusionDefinition"):
        _refuse(where, annotation, "an annotation other than FusionDefinition")
    if node.returns is not None and not (isinstance(node.returns, ast.Constant) and node.returns.value is None):
        _refuse(where, node.returns, "a return annotation other than None")
    if getattr(node, "type_params", None):
        _refuse(where, node, "type parameters")
    defined: set[str] = set()
    for stmt in node.body:
        if isinstance(stmt, ast.Assign):
            _check_call(stmt.value, defined, where)
            for name in _assigned_names(stmt, where):
                defined.add(name)
        elif isinstance(stmt, ast.Expr):
            _check_call(stmt.value, defined, where)
        else:
            _refuse(where, stmt, f"{_construct(stmt)} in the function")


def _assigned_names(stmt: ast.Assign, where: str) -> list[str]:
    if len(stmt.targets) != 1:
        _refuse(where, stmt, "a chained assignment")
    target = stmt.targets[0]
    names = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
    for name in names:
        if not isinstance(name, ast.Name):
            _refuse(where, name, f"assigning to {_construct(name)}")
        if name.id in _DEFINITION_NAMES or name.id.startswith("__"):
            _refuse(where, name, f"rebinding the name {name.id!r}")
    return [n.id for n in names]  # type: ignore[attr-defined]


def _check_call(node: ast.expr, defined: set[str], where: str) -> None:
    if not isinstance(node, ast.Call):
        _refuse(where, node, f"{_construct(node)} (a statement must be a call of fd or fd.ops)")
    func = node.func
    owner = func.value if isinstance(func, ast.Attribute) else None
    on_fd = isinstance(owner, ast.Name) and owner.id == FD
    on_ops = (
        isinstance(owner, ast.Attribute)
        and owner.attr == "ops"
        and isinstance(owner.value, ast.Name)
        and owner.value.id == FD
    )
    if not (on_fd or on_ops) or not _CALLABLE_ATTR.fullmatch(func.attr):  # type: ignore[attr-defined]
        _refuse(where, func, f"calling {_shown_code(func)} (only fd.<op> and fd.ops.<op> may be called)")
    for arg in node.args:
        _check_value(arg, defined, where)
    for keyword in node.keywords:
        if keyword.arg is None:
            _refuse(where, keyword.value, "** arguments")
        _check_value(keyword.value, defined, where)


def _check_value(node: ast.expr, defined: set[str], where: str) -> None:
    if isinstance(node, ast.Constant):
        if type(node.value) not in (int, float, bool, str, type(None)):
            _refuse(where, node, f"the constant {_shown_code(node)}")
    elif isinstance(node, (ast.List, ast.Tuple)):
        for element in node.elts:
            _check_value(element, defined, where)
    elif isinstance(node, ast.Name):
        if node.id not in defined:
            _refuse(where, node, f"the name {node.id!r} (not defined before in the function)")
    elif isinstance(node, ast.Attribute):
        is_datatype = isinstance(node.value, ast.Name) and node.value.id == "DataType"
        if not (is_datatype and _DATATYPE_ATTR.fullmatch(node.attr)):
            _refuse(where, node, f"the attribute {_shown_code(node)} (only DataType.<Name>)")
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        operand = node.operand
        number = isinstance(operand, ast.Constant) and type(operand.value) in (int, float)
        if not (number or _is_non_finite(operand)):
            _refuse(where, node, f"negating {_shown_code(operand)} (only numbers)")
    elif _is_non_finite(node):
        pass
    elif isinstance(node, ast.Call):
        _check_call(node, defined, where)
    else:
        _refuse(where, node, _construct(node))


def _is_non_finite(node: ast.expr) -> bool:
    """``float("inf")``, ``float("-inf")`` or ``float("nan")``."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "float"
        and not node.keywords
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value in _NON_FINITE
        and type(node.args[0].value) is str
    )


_CONSTRUCTS = {
    ast.Import: "an import",
    ast.ImportFrom: "an import",
    ast.Lambda: "a lambda",
    ast.ListComp: "a comprehension",
    ast.SetComp: "a comprehension",
    ast.DictComp: "a comprehension",
    ast.GeneratorExp: "a comprehension",
    ast.JoinedStr: "an f-string",
    ast.FormattedValue: "an f-string",
    ast.BinOp: "an operator",
    ast.BoolOp: "an operator",
    ast.Compare: "a comparison",
    ast.IfExp: "a conditional",
    ast.UnaryOp: "an operator",
    ast.Subscript: "a subscript",
    ast.Starred: "a starred expression",
    ast.Dict: "a dict",
    ast.Set: "a set",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
    ast.NamedExpr: "an assignment expression",
    ast.Attribute: "an attribute",
    ast.Name: "a bare name",
    ast.Constant: "a bare constant",
    ast.Call: "a call",
    ast.FunctionDef: "a function definition",
    ast.AsyncFunctionDef: "an async function",
    ast.ClassDef: "a class",
    ast.Return: "return",
    ast.Delete: "del",
    ast.AugAssign: "an augmented assignment",
    ast.AnnAssign: "an annotated assignment",
    ast.For: "a for loop",
    ast.AsyncFor: "a for loop",
    ast.While: "a while loop",
    ast.If: "an if statement",
    ast.With: "a with statement",
    ast.AsyncWith: "a with statement",
    ast.Raise: "raise",
    ast.Try: "a try statement",
    ast.Assert: "assert",
    ast.Global: "global",
    ast.Nonlocal: "nonlocal",
    ast.Pass: "pass",
    ast.Break: "break",
    ast.Continue: "continue",
    ast.Expr: "an expression",
    ast.Assign: "an assignment",
}


def _construct(node: ast.AST) -> str:
    return _CONSTRUCTS.get(type(node), f"a {type(node).__name__} node")


def _refuse(where: str, node: ast.AST, what: str) -> NoReturn:
    line = getattr(node, "lineno", "?")
    raise ReplayError(f"{where}: line {line}: {_REFUSED}: {what}")


def _shown_code(node: ast.AST, limit: int = 40) -> str:
    """The code of ``node`` for a refusal, cut to ``limit`` characters (one nested past what
    ``ast.unparse`` can recurse through is named, not shown)."""
    try:
        text = ast.unparse(node)
    except (RecursionError, MemoryError):
        return f"an expression nested too deeply to show ({_construct(node)})"
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _shown(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
