"""Cases the fuzz harness found, kept as printed (``Case(...)``): each must break no rule now.

- A definition of 20,000 constants: `diff` and `repro` ran past the limit (the canonical text
  tried an alternation of every value name at every position of every line: quadratic).
- A definition nesting 30,000 unary minus around a gather's dimension: MemoryError from the parser.
- A round trip with a link planted where its script goes and an input no script can name: exit 2
  with its summary saying why (NOT REPLAYED), nothing written through the link.
- A kernel's block of 0 threads: the Perfetto trace's SM tracks divided by it (ZeroDivisionError).
- A definition nesting 1,000 unary minus (the parser's depth, not the printer's): `repro`'s refusal
  printed the expression and recursed past Python's limit (RecursionError).
- A gzipped capture (41 kB) whose warning is 2,000,000 colour escapes: the Markdown and HTML
  reports wrote it whole (20 and 16 MB, 465 MB of memory, past 384 MiB + 4x the input).
- A capture whose nvFuser version is 2,000,000 colour escapes (20 MB): the Markdown report wrote it
  three times (the environment table, the finding's evidence, the property table: 60 MB), past the
  10 s CPU limit, and the process killed there left its temporary file.

Each is kept with the command that broke the rule (the harness printed it with two more).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .cases import Case
from .test_fuzz import check_case

DATA = Path(__file__).resolve().parents[1] / "data"

KEPT = [
    Case(
        kind="capture",
        seed="constants",
        mutations=(("fusions.0.definition", "definition", ("constants", 20_000)),),
        commands=("diff",),
    ),
    Case(
        kind="capture",
        seed="offset",
        mutations=(("fusions.0.definition", "definition", ("unary-minus-gather", 30_000)),),
        commands=("md",),
    ),
    Case(
        kind="folder",
        seed="cli",
        mutations=(
            ("fusions.0.inputs.1.device", "text", ("x", 200000)),
            ("fusions.0.kernels.0.timing.summary.count", "set", 0),
        ),
        commands=("roundtrip-folder",),
        plants=(("out/t.json", "link-folder"), ("out/script_fusion0.py", "link-dangling")),
    ),
    Case(
        kind="capture",
        seed="cli",
        mutations=(("fusions.0.kernels.0.launch.block.0", "set", 0),),
        commands=("perfetto",),
    ),
    Case(
        kind="capture",
        seed="constants",
        mutations=(
            ("fusions.0.definition", "definition", ("constants", 1000)),
            ("fusions.0.definition", "definition", ("long-literal", 500000)),
            ("fusions.0.definition", "definition", ("unary-minus-gather", 1000)),
        ),
        commands=("repro",),
    ),
    Case(
        kind="gzip",
        seed="blocks",
        mutations=(("warnings.0", "text", ("\x1b[31m", 2000000)),),
        commands=("md",),
    ),
    Case(
        kind="capture",
        seed="offset",
        mutations=(("environment.nvfuser_version", "text", ("\x1b[31m", 2000000)),),
        commands=("md", "html"),
    ),
]


@pytest.mark.parametrize("case", KEPT, ids=[f"{c.kind}-{c.seed}-{c.commands[0]}" for c in KEPT])
def test_kept_case_breaks_no_rule(case, tmp_path):
    assert check_case(case, tmp_path) == []


def test_a_fusion_past_the_repro_input_limit_is_refused_in_one_line(tmp_path):
    """Found by the harness: a capture whose fusion lists 20,000 inputs (a recorded one widened in
    this test) made `repro` read a 4 MB script back as Python (500 MB, past 10 s of CPU), and the
    process killed at its limit left its temporary file behind."""
    import copy
    import json
    import subprocess
    import sys

    from fusiondiff.records.limits import REPRO_INPUTS

    data = json.loads((DATA / "offset" / "live.json").read_text())
    fusion = data["fusions"][0]
    fusion["inputs"] = [copy.deepcopy(fusion["inputs"][i % len(fusion["inputs"])]) for i in range(REPRO_INPUTS + 1)]
    (tmp_path / "cap.json").write_text(json.dumps(data))
    done = subprocess.run(
        [sys.executable, "-m", "fusiondiff", "repro", "cap.json", "-o", "out"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{REPRO_INPUTS + 1} inputs, more than the {REPRO_INPUTS}" in done.stderr.splitlines()[-1]
    assert not (tmp_path / "out").exists()
