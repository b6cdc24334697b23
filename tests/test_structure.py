"""The shape of the package, read from its source: which module imports which, and module sizes.

Every module under ``fusiondiff/`` is parsed with :mod:`ast` (nothing is imported) and every
``import`` statement in it is an edge, those inside functions included: a function-local import
is how a module defers a dependency, not how it escapes one. Imports under ``if TYPE_CHECKING:``
are edges for the layer rules (a type named is a dependency) but not for cycles (they never run).
Modules named as strings (the report formats' table, ``importlib.import_module``) are not seen.

What is enforced, and why:

- no cycle between modules, type-only imports included: data flows one way (ARCHITECTURE.md);
- the layers are the package's folders (:data:`LAYERS`): each imports only its own and those below
  it, and every module is in one, but for the package's entries (:data:`ROOT_MODULES`); within
  them, ``diff/`` and ``report/`` take records and never read or write files (``io/``), and only
  the console script's entry imports the command line;
- the GPU stack (torch, Thunder, nvFuser, litgpt, safetensors, NVML) is never imported when a
  module is, and only by the modules that record, replay or set up a live session;
- no module over :data:`MAX_MODULE_LINES` lines: split by job when a file does two.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "fusiondiff"

MAX_MODULE_LINES = 450


@dataclass(frozen=True)
class Import:
    """One import statement's target, as seen in ``importer``'s source."""

    importer: str
    module: str
    """The fusiondiff module it names (the longest that exists), or the outside package's full name."""
    line: int
    in_function: bool
    type_only: bool
    """Under ``if TYPE_CHECKING:``: for type checkers, never run."""

    @property
    def internal(self) -> bool:
        return _within(self.module, "fusiondiff")


def _within(module: str, prefix: str) -> bool:
    """``module`` is ``prefix`` or inside it (``fusiondiff.diff.core`` is within ``fusiondiff.diff``)."""
    return module == prefix or module.startswith(prefix + ".")


def module_files(package: Path = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> its file, for every module of the package (a package is its ``__init__``)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports_of(name: str, source: str, modules: set[str], is_package: bool = False) -> Iterator[Import]:
    """Every import in ``source`` (the module ``name``): relative ones resolved, ``from X import Y``
    naming the submodule ``X.Y`` where there is one, else ``X``."""

    def target(dotted: str) -> str:
        if not _within(dotted, "fusiondiff"):
            return dotted
        while dotted not in modules and "." in dotted:
            dotted = dotted.rpartition(".")[0]
        return dotted

    def visit(node: ast.AST, in_function: bool, type_only: bool) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield Import(name, target(alias.name), child.lineno, in_function, type_only)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    package = name.split(".") if is_package else name.split(".")[:-1]
                    package = package[: len(package) - (child.level - 1)]
                    base = ".".join(package + ([child.module] if child.module else []))
                for alias in child.names:
                    full = f"{base}.{alias.name}"
                    yield Import(name, target(full if full in modules else base), child.lineno, in_function, type_only)
            elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                yield from visit(ast.Module(body=child.body, type_ignores=[]), in_function, True)
                yield from visit(ast.Module(body=child.orelse, type_ignores=[]), in_function, type_only)
            else:
                function = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                yield from visit(child, in_function or function, type_only)

    yield from visit(ast.parse(source), False, False)


def all_imports() -> list[Import]:
    files = module_files()
    names = set(files)
    found = []
    for name, path in files.items():
        found += imports_of(name, path.read_text(encoding="utf-8"), names, path.name == "__init__.py")
    return found


IMPORTS = all_imports()


def internal_edges(*, type_only: bool) -> dict[str, set[str]]:
    """Module -> the fusiondiff modules it imports (with the type-only imports or without)."""
    edges: dict[str, set[str]] = {name: set() for name in module_files()}
    for imp in IMPORTS:
        if imp.internal and imp.module != imp.importer and (type_only or not imp.type_only):
            edges[imp.importer].add(imp.module)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_reader_sees_local_relative_and_type_only_imports():
    """The parser this file relies on, on a module written for it."""
    source = (
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "from fusiondiff.diff import core\n"
        "from . import records\n"
        "if TYPE_CHECKING:\n"
        "    from fusiondiff.report.interface import DiffReport\n"
        "def f():\n"
        "    import torch\n"
        "    from ..io.store import load_capture\n"
        "class C:\n"
        "    def g(self):\n"
        "        from fusiondiff.records.model import Capture\n"
    )
    modules = {"fusiondiff", "fusiondiff.diff", "fusiondiff.diff.core", "fusiondiff.diff.records"}
    modules |= {"fusiondiff.io.store", "fusiondiff.records.model", "fusiondiff.report.interface"}
    seen = {(i.module, i.in_function, i.type_only) for i in imports_of("fusiondiff.diff.x", source, modules)}
    assert seen == {
        ("__future__", False, False),
        ("typing", False, False),
        ("fusiondiff.diff.core", False, False),
        ("fusiondiff.diff.records", False, False),
        ("fusiondiff.report.interface", False, True),
        ("torch", True, False),
        ("fusiondiff.io.store", True, False),
        ("fusiondiff.records.model", True, False),
    }
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_package_is_read_whole():
    """Function-local imports are found in the real package: the command line's handlers import
    what they need, and the round trip reads its captures in a function."""
    edges = internal_edges(type_only=False)
    assert len(edges) > 100
    assert {"fusiondiff.front.api", "fusiondiff.diff.core"} <= edges["fusiondiff.front.cli"]
    assert "fusiondiff.roundtrip.sources" in edges["fusiondiff.roundtrip.run"]


def test_no_import_cycles():
    """Type-only imports included: a type named both ways is a circle too (an interface breaks it)."""
    found = cycles(internal_edges(type_only=True))
    assert not found, "modules that import each other (directly or around a circle): " + "; ".join(
        " <-> ".join(c) for c in found
    )


LAYERS = ("records", "io", "recording", "replay", "diff", "report", "roundtrip", "front")
"""The package's folders, from the bottom up: each imports only its own and those below it.

``records``: the frozen data model, its value rules and codec, and the small helpers every layer
shares; ``io``: files (captures, timelines, the ranks' files); ``recording``: the recorder, its
timers and input copies; ``replay``: repro scripts and the processes that run them (the block
level's probe rebuilds a fusion as a replay does); ``diff``: matching, statistics, the rules and
the ledger; ``report``: the words and the formats; ``roundtrip``: a whole session replayed and
diffed; ``front``: the command line, the API that starts from files, the notebook, the demo and
live capture."""

ROOT_MODULES = {
    "fusiondiff": "the package's face: its public names, imported when first used",
    "fusiondiff.__main__": "``python -m fusiondiff``",
    "fusiondiff.console": "the console script's entry (pyproject.toml), which handles Ctrl-C from its first statement",
    "fusiondiff.notebook": "the notebook's documented path, ``import fusiondiff.notebook``",
}
"""The only modules outside the layers' folders; they stand above them all."""


def layer_of(module: str) -> int:
    """The module's layer, counted from the bottom; the package's root modules stand above them."""
    if module in ROOT_MODULES:
        return len(LAYERS)
    return LAYERS.index(module.split(".")[1])


def test_every_module_is_in_a_layer_folder():
    outside = [m for m in module_files() if m not in ROOT_MODULES and m.split(".")[1] not in LAYERS]
    assert not outside, f"modules outside the layers' folders ({', '.join(LAYERS)}): {outside}"


def test_each_layer_imports_only_downward():
    """Type-only and function-local imports included: a type named is a dependency too."""
    up = [
        f"{imp.importer} imports {imp.module} (line {imp.line})"
        for imp in IMPORTS
        if imp.internal and imp.module != "fusiondiff" and layer_of(imp.module) > layer_of(imp.importer)
    ]
    assert not up, f"imports up a layer ({' < '.join(LAYERS)}): " + "; ".join(up)


@dataclass(frozen=True)
class Rule:
    """Modules within ``importers`` import no module within ``forbidden``, unless ``allowed``."""

    name: str
    importers: tuple[str, ...]
    forbidden: tuple[str, ...]
    allowed: Callable[[Import], bool] = lambda imp: False


FRONT_ENTRY = {
    ("fusiondiff.__main__", "fusiondiff.console"),
    ("fusiondiff.console", "fusiondiff.front.cli"),
    ("fusiondiff.front.cli", "fusiondiff.front.cli_parser"),
    ("fusiondiff.front.cli", "fusiondiff.front.cli_options"),
    ("fusiondiff.front.cli", "fusiondiff.front.block_options"),
    ("fusiondiff.front.cli_parser", "fusiondiff.front.cli_options"),
    ("fusiondiff.front.cli_parser", "fusiondiff.front.block_options"),
    ("fusiondiff.front.cli_options", "fusiondiff.front.block_options"),
}

COMMAND_LINE = (
    "fusiondiff.front.cli",
    "fusiondiff.console",
    "fusiondiff.front.cli_parser",
    "fusiondiff.front.cli_options",
    "fusiondiff.front.block_options",
)

RULES = (
    Rule(
        "diff and report take records: they read and write no file",
        ("fusiondiff.diff", "fusiondiff.report"),
        ("fusiondiff.io",),
    ),
    Rule(
        "only the console script's entry imports the command line",
        ("fusiondiff",),
        COMMAND_LINE,
        allowed=lambda imp: (imp.importer, imp.module) in FRONT_ENTRY,
    ),
)


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.name)
def test_rules_within_the_layers(rule: Rule):
    broken = [
        f"{imp.importer} imports {imp.module} (line {imp.line})"
        for imp in IMPORTS
        if imp.internal
        and imp.module != imp.importer
        and any(_within(imp.importer, m) for m in rule.importers)
        and any(_within(imp.module, m) for m in rule.forbidden)
        and not rule.allowed(imp)
    ]
    assert not broken, f"{rule.name}: " + "; ".join(broken)


GPU_STACK = ("torch", "thunder", "nvfuser", "nvfuser_direct", "litgpt", "safetensors", "pynvml")
"""Packages of the live side (``pip install fusiondiff[live]``): `fusiondiff diff`, `show` and the
reports run without them."""

GPU_SIDE = {
    "fusiondiff.recording": "the recorder, its timers and input copies",
    "fusiondiff.replay.child": "the replay's child process, which runs the repro scripts",
    "fusiondiff.replay.process_setup": "a replay process's imports, CUDA context and profiler start",
    "fusiondiff.replay.timeline_recording": "the per-CTA probe's compile and run",
    "fusiondiff.front.live": "capture in a Thunder session",
    "fusiondiff.front.seed": "the seed model the demo runs live",
    "fusiondiff.front.demo": "the demo's live half checks for a GPU",
    "fusiondiff.records.distributed": "the process group's rank and NCCL streams under torchrun",
    "fusiondiff.roundtrip.plan": "counts the visible GPUs",
    "fusiondiff.io.store": "saves and loads exact input tensors (safetensors)",
}
"""Modules that may import the GPU stack, inside a function, and why."""


def test_the_gpu_stack_is_imported_late_and_only_by_the_live_side():
    stack = [imp for imp in IMPORTS if imp.module.split(".")[0] in GPU_STACK]
    assert stack, "the reader found no import of torch at all"
    at_import = [f"{i.importer} line {i.line}: {i.module}" for i in stack if not i.in_function and not i.type_only]
    assert not at_import, "imported with the module (import it inside the function): " + "; ".join(at_import)
    elsewhere = [
        f"{i.importer} line {i.line}: {i.module}"
        for i in stack
        if not i.type_only and not any(_within(i.importer, m) for m in GPU_SIDE)
    ]
    assert not elsewhere, "the GPU stack outside the live side: " + "; ".join(elsewhere)


def test_pandas_is_the_notebooks_only():
    found = [i.importer for i in IMPORTS if i.module.split(".")[0] in ("pandas", "matplotlib")]
    assert set(found) <= {"fusiondiff.front.notebook"}


def test_no_module_is_over_the_size_limit():
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in module_files().items()}
    over = sorted((n, s) for n, s in sizes.items() if s > MAX_MODULE_LINES)
    assert not over, f"over {MAX_MODULE_LINES} lines (split by job): {over}"
