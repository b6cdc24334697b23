"""Programs outside the repo's fixtures, run on the H200 as a new user would (tests/data/newuser,
its README says how): an OLMo-2 training step with block timelines and its round trip, and a
thunderfx op mix captured while another process kept the GPU busy, with its clean control. Checked
through the command line (run in the test's process: nothing here is about the process)."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest
from host_copies import with_host_samples
from inprocess import fusiondiff

from fusiondiff.diff import diff
from fusiondiff.io.store import load_capture
from fusiondiff.report.formats.diff_text import render_diff_text

DATA = Path(__file__).resolve().parent.parent / "data" / "newuser"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``fusiondiff ARGS`` in the recordings' folder, run in this process (:mod:`inprocess`)."""
    return fusiondiff(*args, cwd=DATA)


def _section(text: str, title: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def test_olmo_step_round_trip_is_same_speed_and_host_time_on_its_own_question():
    done = _cli("diff", "olmo/live.json", "olmo/rt/replay.json")
    assert done.returncode == 0, done.stderr
    result = diff(load_capture(DATA / "olmo" / "live.json"), load_capture(DATA / "olmo" / "rt" / "replay.json"))
    verdicts = sorted(p.timing.verdict for p in result.pairs)
    # nvFusion1 2.4 % faster, nothing recorded apart: within what moves a fusion between processes
    # (it read FASTER, unexplained, when the floor was 2 % of A's median)
    assert verdicts == ["SAME"] * 10
    assert result.findings_of("kernel") == ()
    # one live call and four warm-ups a record: too few for the host question, which says so
    assert result.findings_of("host") == () and not result.judged("host")
    assert "host: not judged" in done.stdout
    # on copies with the host times repeated (host_copies), nvFusion1's live call (336 us on the
    # host) is within the between-process floor of its replay's (219 to 376 us): the fusions whose
    # live calls are beyond it are host-bound, and it is not
    judged = diff(
        with_host_samples(load_capture(DATA / "olmo" / "live.json")),
        with_host_samples(load_capture(DATA / "olmo" / "rt" / "replay.json")),
    )
    (host,) = judged.findings_of("host")
    assert host.rule == "host_bound" and len(host.fusions) >= 5
    assert not any(label.startswith("nvFusion1 ") for label in host.fusions)


def test_a_long_aten_kernel_name_gets_a_line_of_its_own_in_the_fusion_table():
    """OLMo's nvFusion1 lists its kernels where one of them differs; its fusion is SAME on the
    recording, so this test derives a copy of the diff whose other kernel reads FASTER (the
    layout is what is tested, not the verdict)."""
    live, replay = load_capture(DATA / "olmo" / "live.json"), load_capture(DATA / "olmo" / "rt" / "replay.json")
    result = diff(live, replay)
    index = next(i for i, p in enumerate(result.pairs) if any("FillFunctor" in k.normalized_name for k in p.kernels))
    pair = result.pairs[index]
    other = next(i for i, k in enumerate(pair.kernels) if "FillFunctor" not in k.normalized_name)
    faster = dataclasses.replace(pair.kernels[other].timing, verdict="FASTER")
    kernels = list(pair.kernels)
    kernels[other] = dataclasses.replace(kernels[other], timing=faster)
    pairs = list(result.pairs)
    pairs[index] = dataclasses.replace(pair, kernels=tuple(kernels))
    derived = dataclasses.replace(result, pairs=tuple(pairs))
    table = _section(render_diff_text(derived, 100), "fusions")
    header = table[1]
    verdict_column = header.index("verdict (B vs A)")
    aten = next(i for i, line in enumerate(table) if "FillFunctor" in line)
    assert table[aten].strip().startswith("void at::native::vectorized_elementwise_kernel")
    assert not table[aten].rstrip().endswith(("SAME", "FASTER", "SLOWER"))  # the name alone
    # piped, the name is wrapped at 100 columns (issue #41): its rest on the next line, then its numbers
    assert table[aten + 1].strip() == "std::array<char*, 1ul> >" and max(map(len, table)) <= 100
    numbers = table[aten + 2]
    assert numbers[:verdict_column].strip().endswith("%") and numbers[verdict_column:].strip() == "SAME"
    # every row's verdict stands in the verdict column
    for line in table[2:-1]:
        if line.rstrip().endswith(("SAME", "FASTER")):
            assert line[verdict_column:].strip() in ("SAME", "FASTER"), line


def test_refusals_and_long_names_set_no_width_in_the_block_table():
    block = _section(_cli("diff", "olmo/live.json", "olmo/rt/replay.json").stdout, "block level")
    header = block[1]
    assert "side  SMs  waves" in header  # the SMs column as wide as its numbers, not as a refusal
    assert header.index("side") <= len("  nvfuser_inner_outer_persistent_g1  ")
    refused = [line for line in block if "refused:" in line]
    assert refused and all("not generated by nvFuser (not generated" not in line for line in refused)
    assert any("refused: not generated by nvFuser: nothing to instrument" in line for line in refused)
    aten = [line for line in block if "FillFunctor" in line]
    assert aten and all(line.strip().startswith("void at::native") and "refused" not in line for line in aten)


@pytest.mark.parametrize("renderer", ["md", "html"])
def test_the_olmo_reports_render(tmp_path: Path, renderer: str):
    out = tmp_path / f"report.{renderer}"
    done = _cli("report", "olmo/live.json", "olmo/rt/replay.json", "-o", str(out))
    assert done.returncode == 0 and out.stat().st_size > 10_000, done.stderr  # 0 once written (issue #41)
    assert "nvfuser_inner_persistent_g6" in out.read_text()


def test_another_process_busy_with_elementwise_work_ranks_first_and_costs_this_kernel_nothing():
    done = _cli("diff", "busy/live.json", "busy/replay.json")
    assert done.returncode == 0, done.stderr
    result = diff(load_capture(DATA / "busy" / "live.json"), load_capture(DATA / "busy" / "replay.json"))
    assert [p.timing.verdict for p in result.pairs] == ["SAME"]
    # it costs this kernel nothing: listed with no share (it ranked first before, by role order)
    top = next(f for f in result.findings if f.rule == "other_processes")
    assert (top.rule, top.role, top.explained_ns, top.evidenced) == ("other_processes", "setup", 0, True)
    data = {e.field: e for e in top.data if e.subject is None}
    assert (data["other_processes"].a, data["other_processes"].b) == (1, 0)
    assert data["other_process_sm_util"].a == pytest.approx(0.99)
    assert "1 other process(es) had a context on A's GPU" in " ".join(done.stdout.split())  # wrapped (issue #41)


def test_the_clean_control_has_no_finding_and_exits_0():
    done = _cli("diff", "clean/live.json", "clean/replay.json")
    assert done.returncode == 0, done.stderr
    assert "recorded properties identical" in " ".join(done.stdout.split())
    result = diff(load_capture(DATA / "clean" / "live.json"), load_capture(DATA / "clean" / "replay.json"))
    assert result.findings == () and result.comparable


def test_a_kernel_name_of_ordinary_length_widens_the_column_instead_of_wrapping():
    timers = DATA.parent / "timers" / "seed_train_step"
    done = _cli("diff", str(timers / "kineto.json"), str(timers / "nvfuser.json"))
    table = _section(done.stdout, "fusions")
    verdict_column = table[1].index("verdict (B vs A)")
    rows = [line for line in table if line.strip().startswith("nvfuser_inner_outer_persistent_g1")]
    assert rows and all(row[verdict_column:].strip() == "SAME" for row in rows)
