"""What a script sets up for nvFuser before it runs: read from its text, never by running it.

The replay child imports this before ``nvfuser_direct`` (see :mod:`fusiondiff.replay.child`).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from fusiondiff.records.errors import ReplayError


def script_nvfuser_env(source: str, filename: str = "<script>") -> dict[str, str]:
    """The ``NVFUSER_*`` variables a script sets at its top level with ``os.environ[NAME] = "value"``.

    A runner that imports ``nvfuser_direct`` before running the script (to intercept ``execute``)
    should put these in the process environment first: set later, nvFuser may never read them.
    """
    try:
        body = ast.parse(source, filename=filename).body
    except SyntaxError as exc:
        raise ReplayError(f"{filename} is not valid Python: {exc.msg} (line {exc.lineno})") from None
    found: dict[str, str] = {}
    for stmt in body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        target, value = stmt.targets[0], stmt.value
        if not (isinstance(target, ast.Subscript) and ast.unparse(target.value) == "os.environ"):
            continue
        name = target.slice
        if (
            isinstance(name, ast.Constant)
            and isinstance(name.value, str)
            and name.value.startswith("NVFUSER_")
            and isinstance(value, ast.Constant)
            and isinstance(value.value, str)
        ):
            found[name.value] = value.value
    return found


def scripts_nvfuser_env(sources: Sequence[tuple[str, str]]) -> dict[str, str]:
    """The ``NVFUSER_*`` settings of several scripts replayed in one process, from their
    ``(filename, source)``; two scripts that set one variable differently raise :class:`ReplayError`
    (one process can hold only one setting)."""
    environment: dict[str, tuple[str, str]] = {}
    for script, source in sources:
        for name, value in script_nvfuser_env(source, filename=script).items():
            first = environment.setdefault(name, (value, script))
            if first[0] != value:
                raise ReplayError(f"{first[1]} and {script} set {name} differently: replay them separately")
    return {name: value for name, (value, _) in environment.items()}
