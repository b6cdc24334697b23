"""Which GPU a repro script runs on: CUDA ordinals the script pins, moved to a device that exists.

A capture recorded under torchrun holds rank 1's fusions on ``cuda:1``, and so do their repro
scripts (``synthesize_storage(..., 'cuda:1')``, ``fd.execute(inputs, device=1)``); nvFuser's own
``repro_script_for`` writes ``device='cuda:0'``. On a machine with one GPU, or in a round-trip
worker that sees only its own GPU, ``cuda:1`` does not exist and the script fails before its
fusion runs. The replay therefore moves every pinned ordinal the machine lacks to the device the
replay runs on, and says so in one line; ``--device N`` picks that device and moves every pinned
ordinal to it.

Why the script's text and not a shim at run time: an ordinal reaches CUDA through many doors
(``torch.device``, the ``device=`` of every factory function, ``Tensor.to``/``.cuda``,
``torch.cuda.set_device``, nvFuser's ``execute(device=)``), most resolved in C++, so there is no one
Python function to intercept; and ``CUDA_VISIBLE_DEVICES`` can only hide devices, never make
``cuda:1`` name the one device left. The script is already parsed before it runs (legacy
translation, ``NVFUSER_*`` variables), so the literals are rewritten where they stand, on their own lines:
the line numbers of a traceback still point at the file on disk.

What is moved: string constants ``"cuda:N"``; integer constants given as ``device=N`` (any call),
as ``torch.device(N)``/``torch.device("cuda", N)``/``torch.cuda.device(N)``, ``set_device(N)``,
``.cuda(N)`` and ``.to(N)``. An ordinal computed at run time (a variable, an f-string, the
environment) is not seen. Pure text, no torch: runs anywhere.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from fusiondiff.records.errors import ReplayError

_CUDA_STRING = re.compile(r"cuda:(\d+)")
_ORDINAL_CALLS = frozenset({"device", "set_device", "cuda", "to"})
"""Calls whose first positional integer is a CUDA ordinal (``torch.device(1)``, ``x.cuda(1)``...)."""


@dataclass(frozen=True)
class _Site:
    """One literal that names a CUDA ordinal, with where it stands in the source."""

    ordinal: int
    line: int
    """1-based, as :mod:`ast` counts."""
    start: int
    end: int
    """UTF-8 byte offsets within the line, as :mod:`ast` gives them."""
    is_string: bool


def _int_constant(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int and node.value >= 0:
        return node.value
    return None


def _call_name(func: ast.AST) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


class _Finder(ast.NodeVisitor):
    def __init__(self) -> None:
        self.sites: list[_Site] = []

    def _add(self, node: ast.expr, ordinal: int, is_string: bool) -> None:
        if node.end_lineno != node.lineno or node.end_col_offset is None:
            return  # a literal spread over lines (implicit concatenation): left as written
        self.sites.append(_Site(ordinal, node.lineno, node.col_offset, node.end_col_offset, is_string))

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            match = _CUDA_STRING.fullmatch(node.value)
            if match:
                self._add(node, int(match[1]), True)

    def visit_Call(self, node: ast.Call) -> None:
        name = _call_name(node.func)
        if name in _ORDINAL_CALLS and node.args:
            first = node.args[0]
            # torch.device("cuda", 1): the ordinal is the second argument
            if name == "device" and isinstance(first, ast.Constant) and first.value == "cuda" and len(node.args) > 1:
                first = node.args[1]
            ordinal = _int_constant(first)
            if ordinal is not None:
                self._add(first, ordinal, False)
        for keyword in node.keywords:
            ordinal = _int_constant(keyword.value)
            if keyword.arg == "device" and ordinal is not None:
                self._add(keyword.value, ordinal, False)
            elif keyword.arg == "index" and name == "device" and ordinal is not None:
                self._add(keyword.value, ordinal, False)
        self.generic_visit(node)


def _sites(source: str, filename: str) -> list[_Site]:
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise ReplayError(f"{filename} is not valid Python: {exc.msg} (line {exc.lineno})") from None
    finder = _Finder()
    finder.visit(tree)
    return finder.sites


def pinned_ordinals(source: str, filename: str = "<script>") -> set[int]:
    """The CUDA ordinals a script names in literals (see the module docstring for which)."""
    return {site.ordinal for site in _sites(source, filename)}


def device_mapping(pinned: Iterable[int], device_count: int, chosen: int | None, current: int = 0) -> dict[int, int]:
    """Which pinned ordinals move, and where.

    With ``chosen`` (``--device``), every ordinal other than it moves to it: the replay runs there.
    Without, only the ordinals this machine lacks (``>= device_count``) move, to ``current`` (the
    device the replay runs on); the others stay as the script wrote them. Raises
    :class:`ReplayError` when ``chosen`` is not a device of this machine.
    """
    if chosen is not None:
        if chosen < 0 or chosen >= device_count:
            have = "no CUDA device" if device_count == 0 else f"devices 0-{device_count - 1}"
            raise ReplayError(f"--device {chosen}: this machine has {have} visible; choose one of those")
        return {k: chosen for k in sorted(set(pinned)) if k != chosen}
    if device_count == 0:
        return {}  # no GPU at all: the recorder says so, moving ordinals would not help
    return {k: current for k in sorted(set(pinned)) if k >= device_count}


def remap_devices(source: str, mapping: Mapping[int, int], filename: str = "<script>") -> str:
    """``source`` with every pinned ordinal in ``mapping`` replaced by its target, in place:
    the rest of the text, comments and line breaks included, stays as written."""
    if not mapping:
        return source
    edits: dict[int, list[_Site]] = {}
    for site in _sites(source, filename):
        if site.ordinal in mapping:
            edits.setdefault(site.line, []).append(site)
    lines = source.splitlines(keepends=True)
    for number, sites in edits.items():
        raw = lines[number - 1].encode("utf-8")
        for site in sorted(sites, key=lambda s: s.start, reverse=True):
            old = raw[site.start : site.end].decode("utf-8")
            target = mapping[site.ordinal]
            if site.is_string:
                new = old.replace(f"cuda:{site.ordinal}", f"cuda:{target}", 1)
            else:
                new = str(target)
            raw = raw[: site.start] + new.encode("utf-8") + raw[site.end :]
        lines[number - 1] = raw.decode("utf-8")
    return "".join(lines)


def mapping_warnings(script: str, mapping: Mapping[int, int], device_count: int, chosen: int | None) -> list[str]:
    """One line per moved ordinal, for the capture's warnings and the terminal."""
    lines = []
    for ordinal, target in sorted(mapping.items()):
        if chosen is not None:
            lines.append(f"{script} pins cuda:{ordinal}: replayed on cuda:{target} (--device {chosen})")
        else:
            lines.append(
                f"{script} pins cuda:{ordinal}, which this machine lacks ({device_count} visible CUDA "
                f"device{'s' if device_count != 1 else ''}): replayed on cuda:{target}; --device N chooses"
            )
    return lines
