"""What a new user met diffing the recorded captures (issue #23, section 2), each through the real
command line in a fresh process: how a plain ``diff`` ranks, how same-definition fusions pair, what
the text says about units, verdicts, long sources and idle clocks."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).parent / "data"
PLANTED = DATA / "multigpu" / "planted"


def fusiondiff(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """``python -m fusiondiff ARGS`` in a fresh process."""
    command = [sys.executable, "-m", "fusiondiff", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def findings(text: str) -> list[str]:
    """The ranked findings' first lines (``1. [rule, role] title  (explains ...)``)."""
    return re.findall(r"^  \d+\. \[.*$", text, flags=re.MULTILINE)


def test_a_plain_diff_of_two_ranks_ranks_the_planted_offset_first_as_ranks_does():
    """Item 1: rank 1 runs on cuda:1, its own GPU; the device index is where it ran, not a cause."""
    rank0, rank1 = PLANTED / "live.rank0.json", PLANTED / "live.rank1.json"
    plain = fusiondiff("diff", rank0, rank1)
    assert plain.returncode == 1, plain.stderr
    ranked = findings(plain.stdout)
    assert ranked[0].startswith("  1. [storage_offset, cause] Input 0 of nvFusion0 [forward]"), ranked
    assert "explains no measurable time" not in ranked[0]
    assert "device_index" not in plain.stdout and "gpu_or_versions" not in plain.stdout
    ranks = fusiondiff("ranks", rank0, rank1)
    assert "top finding: [storage_offset, cause] Input 0 of nvFusion0 [forward]" in ranks.stdout
    # the same diff: the verdict of rank 1 in `ranks` is the verdict line of the plain diff
    verdict = plain.stdout.split("verdict: ", 1)[1].splitlines()[0]
    assert f"rank 1: {verdict}" in ranks.stdout
