"""The notebooks under notebooks/ run top to bottom on a CPU, in a real Jupyter kernel.

nbclient executes every cell as Jupyter would; a cell that raises fails the test with its
traceback. The cells that need a GPU check for one and fall back to the bundled captures, so on
this machine they exercise the fallback, and on a GPU machine the live path.
"""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_the_notebooks_are_there() -> None:
    assert {p.name for p in NOTEBOOKS} >= {"diff_report.ipynb", "diagnose_my_session.ipynb"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the kernel is another process: it must import this checkout's fusiondiff, not an installed one
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    html = [
        o["data"]["text/html"]
        for o in outputs
        if o.output_type in ("execute_result", "display_data") and "text/html" in o.get("data", {})
    ]
    assert any("<strong>kernel:</strong>" in h for h in html), "a diff shows itself as the HTML report"
