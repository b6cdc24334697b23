"""The diagnosis is data and the words are the report's: the differ imports nothing of
``fusiondiff.report``, no rule module reads text with a regex or picks a unit, and every rule has
its words in the one wording layer."""

from __future__ import annotations

import ast
from pathlib import Path

from fusiondiff.diff.findings import RULES
from fusiondiff.records.gates import QUESTIONS
from fusiondiff.report.words import environment_words, wording

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


_QUESTION_NAMES = set(QUESTIONS)
_TAKES_A_QUESTION = {"findings_of", "ledger", "outcome", "passes", "judged", "present_by_label", "attribute", "_counts"}


def _question_literals(path: Path) -> list[str]:
    """Where ``path`` compares a question's name written as a string, or passes one to what takes
    a question: each as ``line: code``."""
    source = path.read_text()
    found = []
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, ast.Compare):
            operands = [n.left, *n.comparators]
            strings = [c for o in operands for c in ast.walk(o) if isinstance(c, ast.Constant)]
        elif isinstance(n, ast.Call):
            name = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
            strings = [a for a in n.args if isinstance(a, ast.Constant)] if name in _TAKES_A_QUESTION else []
        else:
            continue
        if any(s.value in _QUESTION_NAMES for s in strings):
            found.append(f"{n.lineno}: {ast.get_source_segment(source, n)}")
    return found


def test_no_question_name_is_compared_as_a_string():
    """The questions are declared once (``diff.records``: KERNEL, HOST, FIDELITY, QUESTIONS); the
    differ and the renderers compare with those, so a question renamed or added is one edit."""
    package = DIFF.parent
    found = {
        str(path.relative_to(package)): hits
        for layer in ("diff", "report", "roundtrip", "front")
        for path in sorted((package / layer).rglob("*.py"))
        if (hits := _question_literals(path))
    }
    assert not found


def test_the_question_check_can_fail(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text('x = result.outcome("host")\ny = q == "fidelity"\nz = q in ("kernel", "host")\n')
    assert [hit.split(":")[0] for hit in _question_literals(planted)] == ["1", "2", "3"]
