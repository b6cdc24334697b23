"""The diagnosis is data and the words are the report's: the differ imports nothing of
``fusiondiff.report``, no rule module reads text with a regex or picks a unit, and every rule has
its words in the one wording layer."""

from __future__ import annotations

import ast
from pathlib import Path

from fusiondiff.diff.findings import RULES
from fusiondiff.report import environment_words, wording

DIFF = Path(__file__).resolve().parent.parent.parent / "fusiondiff" / "diff"


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth of its code."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_the_differ_imports_no_renderer():
    for path in DIFF.glob("*.py"):
        assert not any(m.startswith("fusiondiff.report") for m in _imports(path)), path.name


def test_rules_neither_read_text_nor_choose_units():
    for path in DIFF.glob("rules_*.py"):
        imports = _imports(path)
        assert "re" not in imports, path.name
        if path.name != "rules_setup.py":  # its DiffResult.warnings are still lines
            assert "fusiondiff.records.units" not in imports, path.name


def test_every_rule_has_its_words():
    worded = {*wording._WORDS, *wording._TITLES, *environment_words.TITLES}
    assert {rule.__name__ for rule in RULES} <= worded
