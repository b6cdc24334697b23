"""The docs' table of rules is made from the causal model's declarations
(:func:`fusiondiff.diff.causes.rules_table`): a rule added, renamed or given another role there
and not in the docs (or the reverse) fails here. The table had drifted: ``runtime_env``,
``waits_for_kernels`` and ``unexplained`` were declared and missing from it."""

from __future__ import annotations

from pathlib import Path

from fusiondiff.diff.causes import MEANINGS, NODES, rules_table

DOC = Path(__file__).resolve().parents[2] / "docs" / "concepts" / "findings.md"
BEGIN = "<!-- the rules: made from fusiondiff/diff/causes.py (rules_table)"
END = "<!-- end of the rules -->"


def _documented() -> list[str]:
    lines = DOC.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(BEGIN))
    return lines[start + 1 : lines.index(END)]


def test_the_docs_table_of_rules_is_the_one_the_declarations_make():
    assert _documented() == rules_table(), "docs/concepts/findings.md: paste rules_table()'s rows between the markers"


def test_every_node_has_one_meaning_and_one_row():
    names = [n.name for n in NODES]
    assert len(names) == len(set(names)) and set(MEANINGS) == set(names)
    rows = [row.split("`")[1] for row in rules_table()[2:]]
    assert rows == names
