"""The fuzz harness: generated hostile cases (``cases.py``) fed to every command and output format
in forked children under the stated limits (``runner.py``, :mod:`fusiondiff.records.limits`).

Every case's commands must exit 0, 1, 2 or 3, an error in one line from fusiondiff, with no
traceback, changing nothing they were not told to write (a planted link's target included), and
within the stated memory and output for their input. The README's test command runs the short
budget (a fixed seed, :data:`CI_SECONDS` of cases); ``.ci/run`` runs it as a step of its own
(``FUSIONDIFF_FUZZ_SECONDS=60``, seed 50) and then the test command with
``FUSIONDIFF_FUZZ_SECONDS=0``, which skips the generated cases (they are not run twice); a
release runs the long budget::

    FUSIONDIFF_FUZZ_SECONDS=3600 FUSIONDIFF_FUZZ_SEED=7 python -m pytest -q tests/fuzz/test_fuzz.py

A failure prints each failing case as Python (``Case(...)``), to be kept in ``test_regressions.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import pytest

from fusiondiff.records import limits

from .cases import Case, argv_of, generate, materialise
from .runner import Outcome, problems, run, snapshot

CI_SECONDS = 40.0
"""Seconds of cases in the README's test command (the whole harness stays under 90 s)."""
CI_SEED = 50
MIN_CASES = 10
"""The short budget runs at least this many cases however loaded the machine is."""


def check_case(case: Case, root: Path) -> list[str]:
    """What each of ``case``'s commands broke, as lines naming the command (empty: nothing)."""
    found = []
    for key in case.commands:
        folder = Path(tempfile.mkdtemp(prefix="case-", dir=root))
        try:
            cap, other, size = materialise(case, folder)
            before = snapshot(folder)
            argv = argv_of(case, key, cap, other)
            outcome = run(argv, folder, size)
            listed = problems(outcome, before, size, own=("out",), summary=argv[0] == "roundtrip")
            for problem in listed + _not_strict_json(folder, outcome.files, before):
                found.append(f"{key} ({' '.join(argv)[:200]}): {problem}")
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return found


def _not_strict_json(folder: Path, files: dict[str, str], before: dict[str, str]) -> list[str]:
    """A JSON file the command wrote that strict JSON readers refuse (NaN, Infinity, bad text)."""
    found = []
    for name in files:
        if name.endswith(".json") and name not in before and files[name].startswith("file "):
            try:
                json.loads((folder / name).read_bytes(), parse_constant=_refuse)
            except (ValueError, OSError) as exc:
                found.append(f"{name} is not strict JSON: {str(exc)[:200]}")
    return found


def _refuse(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def test_generated_cases_break_no_rule(tmp_path):
    seconds = float(os.environ.get("FUSIONDIFF_FUZZ_SECONDS", CI_SECONDS))
    seed = int(os.environ.get("FUSIONDIFF_FUZZ_SEED", CI_SEED))
    if seconds <= 0:
        pytest.skip("FUSIONDIFF_FUZZ_SECONDS=0: the generated cases ran apart (.ci/run's fuzz step)")
    started, index, failures = time.monotonic(), 0, []
    while time.monotonic() - started < seconds or index < MIN_CASES:
        case = generate(seed, index)
        for line in check_case(case, tmp_path):
            failures.append(f"{case!r}\n    {line}")
            print(f"fuzz: case {index} broke a rule, kept as it is printed:\n{failures[-1]}", flush=True)
        index += 1
    report = "\n".join(failures)
    print(f"fuzz: seed {seed}, {index} cases in {time.monotonic() - started:.1f} s, {len(failures)} failures")
    assert not failures, f"{len(failures)} of the commands of {index} cases broke a rule:\n{report}"


def test_the_harness_finds_each_kind_of_problem(tmp_path):
    """The rules can fail: a traceback, an exit past 3, an error in two lines, a changed file, a
    temporary file left, memory and output past the stated multiples, a command killed at its
    wall-clock limit."""
    before = {"keep.txt": "file 9 x"}
    ok = Outcome(2, 10, "fusiondiff show: error: no\n", 0.1, 0, 0.1, dict(before))
    assert problems(ok, before, 0) == []
    bad = [
        replace(ok, stderr="Traceback (most recent call last):\nValueError: x\n", code=1),
        replace(ok, code=4),
        replace(ok, stderr="fusiondiff show: error: a\nfusiondiff show: error: b\n"),
        replace(ok, files={"keep.txt": "file 8 y"}),
        replace(ok, files={**before, "out/.r.html.x.tmp": "file 1 z"}),
        replace(ok, memory_bytes=limits.memory_allowed(100) + 1),
        replace(ok, stdout_bytes=limits.output_allowed(100) + 1),
    ]
    for outcome in bad:
        assert problems(outcome, before, 100), outcome
    (tmp_path / "keep.txt").write_text("precious\n")
    killed = run(["show", "keep.txt"], tmp_path, 0, seconds=0.0)
    assert killed.code != -9 or "wall-clock" in problems(killed, snapshot(tmp_path), 0)[0]
    assert problems(run(["show", "keep.txt"], tmp_path, 0), snapshot(tmp_path), 0) == []
