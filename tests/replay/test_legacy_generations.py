"""Legacy scripts of each nvFuser frontend generation translate to their hand-written direct versions.

``tests/data/legacy_scripts/<generation>_<construct>.py`` are small scripts written for this test in
the style of their generation (2023, 2024, 2025; ``today_`` scripts are already direct and must pass
through untouched); ``direct/<same name>.py`` is each one translated by hand. ``refused/`` holds
scripts with constructs that have no direct counterpart; their first line names what the one-line
message must name. The GPU side (``tests/gpu/test_legacy_scripts.py``) replays both of each pair.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from fusiondiff.records.errors import ReplayError
from fusiondiff.replay.legacy import translate_legacy

SCRIPTS = Path(__file__).parent.parent / "data" / "legacy_scripts"
GENERATIONS = ("2023", "2024", "2025", "today")
LEGACY = sorted(p for p in SCRIPTS.glob("*.py") if not p.name.startswith("today_"))
TODAY = sorted(SCRIPTS.glob("today_*.py"))
REFUSED = sorted((SCRIPTS / "refused").glob("*.py"))


def normalized(source: str) -> str:
    """The script as Python sees it: comments, blank lines and layout do not count."""
    return ast.dump(ast.parse(source))


def test_every_generation_is_covered_by_enough_scripts():
    scripts = LEGACY + TODAY
    assert len(scripts) >= 30
    assert {p.name.split("_", 1)[0] for p in scripts} == set(GENERATIONS)
    assert sorted(p.name for p in (SCRIPTS / "direct").glob("*.py")) == [p.name for p in LEGACY]


@pytest.mark.parametrize("script", LEGACY, ids=lambda p: p.stem)
def test_legacy_script_translates_to_its_hand_written_direct_version(script: Path):
    source = script.read_text()
    result = translate_legacy(source, str(script))
    assert result.is_legacy and result.changes
    assert normalized(result.source) == normalized((SCRIPTS / "direct" / script.name).read_text())
    # every line keeps its number, so an error in the translated script names the user's line
    assert result.source.count("\n") == source.count("\n")
    assert "from nvfuser " not in result.source and "import nvfuser\n" not in result.source


@pytest.mark.parametrize("script", TODAY, ids=lambda p: p.stem)
def test_direct_script_of_today_passes_through_untouched(script: Path):
    source = script.read_text()
    result = translate_legacy(source, str(script))
    assert (result.source, result.is_legacy, result.changes) == (source, False, ())


@pytest.mark.parametrize("script", REFUSED, ids=lambda p: p.stem)
def test_construct_without_equivalent_is_refused_in_one_line_naming_it(script: Path):
    source = script.read_text()
    named = source.splitlines()[0].removeprefix("# refused: ").split(" | ")
    with pytest.raises(ReplayError) as exc:
        translate_legacy(source, str(script))
    message = str(exc.value)
    assert "\n" not in message
    assert message.startswith("fusiondiff could not translate ")
    for construct in named:
        # each construct with its line, then what to do
        at = message.index(construct) + len(construct)
        advice = message[at:].removeprefix(" to nvfuser_direct").removeprefix(": ")
        assert advice and not advice.startswith(";"), message
    assert message.count("(line") == len(named)
