"""A folder Thunder's report functions wrote, read as one side of a diff.

``thunderfx_benchmark_report(..., compare_fusion=True)`` writes ``DIR/graph0/nvfusion_reports/``
and ``save_thunderfx_repros(..., save_fusion=True)`` writes ``DIR/graph0/fusion_reports/``; each
names a region's script ``<graph>_<split>_<nvFusionN>_<forward|backward>_<what>.py``, where
``<what>`` says the backend and kind (``repro_nvfuser``, ``benchmark_nvfuser``,
``nvfuser_WallTime``, ``torchcompile_KernelTime``, ``repro_inductor``...). Beside them are the FX
graphs' own scripts (``thunder.jit``, inductor, eager), traces, and ``failed``/``memory_issue``
folders. :func:`read_thunder_folder` picks one nvFuser script per region to replay and lists every
other script as skipped, with its reason, in one line each; nothing is written, links are never
followed, and a folder far larger than Thunder writes is refused before anything is read.

A benchmark script ends by timing ``fd.execute`` with Thunder's timer (``WallTime``: torch's
``Timer.adaptive_autorange``; ``KernelTime``: the same around ``torch.profiler``, which would take
CUPTI from fusiondiff's own timing). :func:`runnable_source` cuts that ending and Thunder's import
before the script runs, and puts back the single ``fd.execute(inputs)`` Thunder had taken out: the
replay runs the fusion once, as a repro script does, and times it under fusiondiff's protocol;
Thunder need not be installed where the replay runs.
"""

from __future__ import annotations

import ast
import itertools
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fusiondiff.records.errors import ReplayError
from fusiondiff.records.thunder import ThunderFigure, merged_figures, parse_thunder_figures

MAX_ENTRIES = 2000
"""Files and folders read under a Thunder folder at most: Thunder writes a handful per region, so
more is not its folder (or not one folder), and is refused before any script is read."""
MAX_DEPTH = 4
"""Folder levels read below the folder given (Thunder's deepest is ``graph0/nvfusion_reports``)."""
MAX_SCRIPT_BYTES = 64 * 1024 * 1024
"""A script larger than this is not one Thunder wrote (its inputs are made, not inlined)."""

_REGION = re.compile(r"^(?P<region>graph\d+_.+?_nvFusion\d+_(?:forward|backward))_(?P<what>\w+)\.py$")
_GRAPH = re.compile(r"^graph\d+_\w+\.py$")
_NVFUSER_KINDS = ("repro_nvfuser", "benchmark_nvfuser", "nvfuser_WallTime", "nvfuser_KernelTime")
"""A region's nvFuser scripts, the one replayed first: the repro runs the fusion as it is."""


@dataclass(frozen=True)
class RegionScript:
    """The nvFuser script replayed for one nvFusion region."""

    path: str
    region: str
    """Thunder's name of the region (``graph0_thunder_0_nvFusion0_forward``): the replay's name."""


@dataclass(frozen=True)
class SkippedScript:
    """A script of the folder that is not replayed, and why (one line)."""

    path: str
    reason: str


@dataclass(frozen=True)
class ThunderFolder:
    """What :func:`read_thunder_folder` found: the scripts to replay, those skipped, and the medians
    Thunder printed in its benchmark scripts and in ``stream`` (when given)."""

    root: str
    regions: tuple[RegionScript, ...]
    skipped: tuple[SkippedScript, ...]
    figures: tuple[ThunderFigure, ...]


def region_of(script: str | os.PathLike[str]) -> str | None:
    """The nvFusion region an nvFuser script Thunder wrote is for (from its file name), or None."""
    match = _REGION.match(Path(script).name)
    if match is None or match["what"] not in _NVFUSER_KINDS:
        return None
    return match["region"]


def is_thunder_folder(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a folder as Thunder's report functions write it: a ``graphN`` folder in
    it, or it is one (or its ``nvfusion_reports``/``fusion_reports``), or a script in it is named
    as Thunder names a region's. Reads the folder's own entries only."""
    folder = Path(path)
    if folder.is_symlink() or not folder.is_dir():
        return False
    if re.fullmatch(r"graph\d+|(?:nv)?fusion_reports", folder.name):
        return True
    try:
        with os.scandir(folder) as entries:
            for entry, _ in zip(entries, range(MAX_ENTRIES), strict=False):
                if entry.is_dir(follow_symlinks=False) and re.fullmatch(r"graph\d+", entry.name):
                    return True
                if _REGION.match(entry.name):
                    return True
    except OSError:
        return False
    return False


def read_thunder_folder(root: str, stream: str | None = None) -> ThunderFolder:
    """The folder's scripts sorted into one nvFuser script per region and the skipped rest, each
    region's script checked to be Thunder's; :class:`ReplayError` (one line) for a folder too large
    or deep, a damaged or foreign nvFuser script, a folder with no region, or an unreadable ``stream``."""
    paths, skipped = _walk(root)
    by_region: dict[str, list[str]] = {}
    for path in paths:
        region, reason = _classify(path)
        if region is None:
            skipped.append(SkippedScript(path, reason))
        else:
            by_region.setdefault(region, []).append(path)
    regions, figures = [], []
    for region, candidates in sorted(by_region.items()):
        chosen, *others = sorted(candidates, key=_preference)
        regions.append(RegionScript(chosen, region))
        skipped += [SkippedScript(p, f"the same region as {Path(chosen).name}, replayed once") for p in others]
        for path in candidates:
            figures.append(parse_thunder_figures(_checked_script(path), f"{Path(path).name}'s docstring"))
    if not regions:
        raise ReplayError(
            f"{root}: a Thunder folder with no nvFuser script of an nvFusion region in it (see its skipped scripts)"
        )
    printed = () if stream is None else parse_thunder_figures(_read_stream(stream), Path(stream).name)
    return ThunderFolder(
        root, tuple(regions), tuple(sorted(skipped, key=lambda s: s.path)), merged_figures(printed, *figures)
    )


def _walk(root: str) -> tuple[list[str], list[SkippedScript]]:
    """The ``.py`` files under ``root`` (sorted) and the links met, never followed; bounded by
    :data:`MAX_ENTRIES` and :data:`MAX_DEPTH`."""
    scripts: list[str] = []
    links: list[SkippedScript] = []
    count = 0
    pending = [(Path(root), 0)]
    while pending:
        folder, depth = pending.pop()
        try:
            with os.scandir(folder) as listing:  # read no further than the limit
                entries = sorted(itertools.islice(listing, MAX_ENTRIES + 1 - count), key=lambda e: e.name)
        except OSError as exc:
            raise ReplayError(f"cannot read {folder}: {exc.strerror or exc}") from None
        count += len(entries)
        if count > MAX_ENTRIES:
            raise ReplayError(
                f"{root}: more than {MAX_ENTRIES} files under it; Thunder writes a few per nvFusion region, "
                "so this is not one report folder: give a graph folder, or the scripts themselves"
            )
        for entry in entries:
            path = os.path.join(folder, entry.name)
            if entry.is_symlink():
                links.append(SkippedScript(path, "a symbolic link, not followed"))
            elif entry.is_dir(follow_symlinks=False):
                if depth + 1 > MAX_DEPTH:
                    raise ReplayError(f"{path}: deeper than {MAX_DEPTH} folders below {root}; Thunder writes two")
                pending.append((Path(path), depth + 1))
            elif entry.name.endswith(".py") and entry.is_file(follow_symlinks=False):
                scripts.append(path)
    return sorted(scripts), links


def _classify(path: str) -> tuple[str | None, str]:
    """The region an nvFuser script is for, or None and why the script is skipped."""
    name = Path(path).name
    if name.startswith("failed_"):
        return None, "a script Thunder saved because it failed under Thunder, not an nvFuser region"
    match = _REGION.match(name)
    if match is not None:
        what = match["what"]
        if what in _NVFUSER_KINDS:
            return match["region"], ""
        return None, f"the region under another backend ({_backend(what)}), not nvFuser"
    if name.endswith(("_fwd_trace.py", "_bwd_trace.py")):
        return None, "a Thunder trace, not a script to run"
    if _GRAPH.match(name):
        return None, f"an FX graph's script ({_backend(name)}), not one nvFusion region"
    return None, "not a script Thunder's report functions write"


def _backend(what: str) -> str:
    """The backend a Thunder file name says, in a word or two."""
    for key, words in (
        ("torchcompile", "torch.compile"),
        ("inductor", "inductor"),
        ("eager", "eager"),
        ("thunder", "thunder.jit"),
    ):
        if key in what:
            return words
    return "thunder.jit"


def _preference(path: str) -> tuple[int, str]:
    """Sort key: a region's repro first, then its benchmarks (WallTime before KernelTime)."""
    match = _REGION.match(Path(path).name)
    assert match is not None
    return _NVFUSER_KINDS.index(match["what"]), path


def _read_text(path: str, what: str) -> str:
    """A small text file's contents; :class:`ReplayError` (one line) for a missing, huge or
    non-text one."""
    try:
        size = os.stat(path).st_size
        if size > MAX_SCRIPT_BYTES:
            raise ReplayError(f"{path}: {size} bytes, larger than any {what} Thunder writes")
        with open(path, "rb") as file:
            return file.read(MAX_SCRIPT_BYTES).decode("utf-8")
    except OSError as exc:
        raise ReplayError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ReplayError(f"{path} is not text (not UTF-8): not a {what} Thunder writes") from None


def _read_stream(stream: str) -> str:
    """What Thunder printed, as saved by the user (``--thunder-stream``)."""
    return _read_text(stream, "stream")


def _checked_script(path: str) -> str:
    """The script's text, once it is known to be an nvFuser script as Thunder writes one."""
    source = _read_text(path, "script")
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as exc:
        raise ReplayError(
            f"{path} is not valid Python ({exc.msg}, line {exc.lineno}): truncated? Have Thunder write it again"
        ) from None
    if not _builds_fusion(tree) or (not _executes(tree) and _timing_start(tree) is None):
        raise ReplayError(
            f"{path} is named as Thunder names an nvFuser script but is not one (no `with FusionDefinition() "
            "as fd:` and `fd.execute`): truncated, or not Thunder's; leave it out of the folder"
        )
    return source


def _builds_fusion(tree: ast.Module) -> bool:
    """A top-level ``with FusionDefinition() as fd:``, as nvFuser's repro print writes."""
    for node in tree.body:
        if isinstance(node, ast.With):
            for item in node.items:
                call, target = item.context_expr, item.optional_vars
                if (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Name)
                    and call.func.id == "FusionDefinition"
                    and isinstance(target, ast.Name)
                    and target.id == "fd"
                ):
                    return True
    return False


def _executes(tree: ast.Module) -> bool:
    """A top-level ``fd.execute(...)`` call (a repro script's last statement)."""
    return any(
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Attribute)
        and node.value.func.attr == "execute"
        and isinstance(node.value.func.value, ast.Name)
        and node.value.func.value.id == "fd"
        for node in tree.body
    )


def _timing_start(tree: ast.Module) -> ast.stmt | None:
    """A benchmark script's ``nvfuser_fn = fd.execute``: where Thunder's timing begins."""
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and [getattr(t, "id", None) for t in node.targets] == ["nvfuser_fn"]
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "execute"
            and isinstance(node.value.value, ast.Name)
            and node.value.value.id == "fd"
        ):
            return node
    return None


def runnable_source(source: str, script: str | os.PathLike[str]) -> str:
    """The source to run for ``script``: a Thunder nvFuser benchmark script without its timing
    (from ``nvfuser_fn = fd.execute`` to the end) and without Thunder's imports, executing its
    fusion once instead; any other script unchanged. Lines keep their numbers (cut lines are left
    empty), so an error still names the script's own line."""
    if region_of(script) is None or "nvfuser_fn" not in source:
        return source
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source  # the replay's own check says so, at its line
    start = _timing_start(tree)
    if start is None:
        return source
    lines = source.splitlines()
    cut = set(range(start.lineno - 1, len(lines)))
    for node in tree.body:
        if _imports_thunder(node) and node.end_lineno is not None:
            cut.update(range(node.lineno - 1, node.end_lineno))
    kept = ["" if i in cut else line for i, line in enumerate(lines)]
    return "\n".join(kept[: start.lineno - 1]) + "\nfd.execute(inputs)\n"


def _imports_thunder(node: ast.stmt) -> bool:
    """``import thunder...`` or ``from thunder... import ...`` (the timer's import)."""
    if isinstance(node, ast.ImportFrom):
        return (node.module or "").split(".")[0] == "thunder"
    if isinstance(node, ast.Import):
        return any(alias.name.split(".")[0] == "thunder" for alias in node.names)
    return False


def expand_thunder_folders(paths: Sequence[str], stream: str | None) -> tuple[list[str], list[ThunderFolder]]:
    """``paths`` with each Thunder folder among them replaced by its regions' scripts, and the
    folders read (for their skipped scripts and figures)."""
    scripts: list[str] = []
    folders: list[ThunderFolder] = []
    for path in paths:
        if is_thunder_folder(path):
            folder = read_thunder_folder(path, stream)
            folders.append(folder)
            scripts += [region.path for region in folder.regions]
        else:
            scripts.append(path)
    return scripts, folders


def check_output_outside(output: str, paths: Sequence[str]) -> None:
    """Refuse an output inside a Thunder folder being replayed: the folder is read as Thunder wrote
    it, and the replay writes nothing there."""
    target = Path(output).resolve()
    for path in paths:
        if is_thunder_folder(path) and Path(path).resolve() in target.parents:
            raise ReplayError(f"-o {output}: inside the Thunder folder {path}; write the replay outside it")
