"""What a script sets up for nvFuser before it runs: read from its text, never by running it.

The replay child imports this before ``nvfuser_direct`` (see :mod:`fusiondiff.replay.child`).
"""

from __future__ import annotations

import ast

from fusiondiff.errors import ReplayError


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
