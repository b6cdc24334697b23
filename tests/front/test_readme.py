"""README as a newcomer reads it (issue #41): short, the GPU install and the three commands for
one's own script on its first screen, every link into docs/ pointing at a page that exists. The
documentation itself is built by CI with `mkdocs build --strict` (.ci/run)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent.parent
README = (ROOT / "README.md").read_text()
FIRST_SCREEN = 60
"""Lines a reader sees before scrolling far: a laptop's terminal or a repository page's first view."""


def test_readme_is_short():
    assert len(README.splitlines()) <= 200


def test_the_gpu_install_and_the_three_commands_are_on_the_first_screen():
    first = README.splitlines()[:FIRST_SCREEN]
    assert any(line.startswith("    python3 -m pip install -e '.[live]'") for line in first), "GPU install"
    for command in ("fusiondiff capture train.py", "fusiondiff roundtrip live.json", "fusiondiff report live.json"):
        assert any(line.lstrip().startswith(command) for line in first), command


def test_every_link_into_docs_names_a_page_that_exists():
    links = re.findall(r"\]\((docs/[^)#]+)", README)
    assert links
    missing = [link for link in links if not (ROOT / link).is_file()]
    assert not missing


def test_the_license_is_the_one_pyproject_names():
    assert 'license = "Apache-2.0"' in (ROOT / "pyproject.toml").read_text()
    assert "Apache License\n                           Version 2.0, January 2004" in (ROOT / "LICENSE").read_text()
