"""What a new user met with the commands themselves (issue #23, section 2), each through the real
command line: gzipped captures, the live side's packages, ``--fusion``, output formats and help
texts. The command line runs in this process (``tests/inprocess.py``) except where the process is
what is tested: a gzip bomb's bounded read, argparse's refusals, the live side's missing packages."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import zlib
from pathlib import Path

from inprocess import fusiondiff

DATA = Path(__file__).parent.parent / "data"
GEMMA = DATA / "roundtrip_gemma"


def fusiondiff_process(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m fusiondiff ARGS`` in a fresh process."""
    command = [sys.executable, "-m", "fusiondiff", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=cwd)


def one_line_error(result: subprocess.CompletedProcess[str], command: str) -> str:
    """The command failed with exit 2 and exactly one line on stderr, no traceback; that line."""
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"fusiondiff {command}: error: "), result.stderr
    return lines[0]


def test_the_bundled_gzipped_captures_are_read_and_a_gzip_output_is_written(tmp_path):
    """Item 3: ``roundtrip_gemma/*.json.gz`` are read like plain captures; ``-o x.json.gz`` writes gzip."""
    shown = fusiondiff("show", GEMMA / "live.json.gz", "--top", "1")
    assert shown.returncode == 0, shown.stderr
    assert "--model gemma-2-2b" in shown.stdout
    out = tmp_path / "diff.json.gz"
    diffed = fusiondiff("diff", GEMMA / "live.json.gz", GEMMA / "replay.json.gz", "--json", out)
    assert diffed.returncode == 0, diffed.stderr
    assert "same speed: all 27 matched fusion(s) SAME" in diffed.stdout
    assert json.loads(gzip.decompress(out.read_bytes()))["diff"]["pairs"]
    report = tmp_path / "report.json.gz"
    made = fusiondiff("report", GEMMA / "live.json.gz", GEMMA / "replay.json.gz", "-o", report)
    assert made.returncode == 0, made.stderr
    assert json.loads(gzip.decompress(report.read_bytes()))["record"] == "fusiondiff diff"


def _gzip_of_zeros(path: Path, mib: int, forged_size: int | None = None) -> None:
    """A gzip member of ``mib`` MiB of zeros, written in pieces; ``forged_size`` replaces the size
    its trailer states (a bomb that lies about its size)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = bytes(2**20)
    parts = [packer.compress(chunk) for _ in range(mib)]
    data = b"".join(parts) + packer.flush()
    if forged_size is not None:
        data = data[:-4] + forged_size.to_bytes(4, "little")
    path.write_bytes(data)


def test_a_gzip_bomb_is_refused_in_one_line(tmp_path):
    """Item 3: the bound on a capture (512 MiB) holds for what a gzip file decompresses to, also when
    its trailer states a small size."""
    bomb = tmp_path / "bomb.json.gz"
    _gzip_of_zeros(bomb, 513)
    assert bomb.stat().st_size < 2**20
    line = one_line_error(fusiondiff_process("show", bomb), "show")
    assert "decompresses to more than 512 MiB" in line
    _gzip_of_zeros(bomb, 513, forged_size=1000)
    line = one_line_error(fusiondiff_process("show", bomb), "show")
    assert "decompresses to more than 512 MiB" in line
    damaged = tmp_path / "damaged.json.gz"
    damaged.write_bytes(gzip.compress(b'{"kind": "live"')[:-12])
    assert "not a fusiondiff capture" in one_line_error(fusiondiff_process("show", damaged), "show")


OFFSET = (DATA / "offset" / "live.json", DATA / "offset" / "replay_nvfuser.json")


def test_the_report_format_follows_one_table_of_suffixes_and_an_unknown_one_is_an_error(tmp_path):
    """Item 9: ``-o x.pdf`` wrote text and said ``wrote x.pdf (text)``; perfetto and json both took
    ``.json``. Now: one line naming the formats; ``.perfetto.json`` is a trace, ``.json`` the record,
    and ``--format`` wins over the suffix."""
    pdf = tmp_path / "x.pdf"
    line = one_line_error(fusiondiff("report", *OFFSET, "-o", pdf), "report")
    assert "cannot tell the report format from the file name 'x.pdf'" in line
    for suffix in (".txt", ".json", ".md", ".html", ".perfetto.json"):
        assert suffix in line
    assert not pdf.exists()
    made = {}
    for name in ("r.txt", "r.md", "r.html", "r.json", "r.perfetto.json", "r.trace.json", "r.md.gz"):
        result = fusiondiff("report", *OFFSET, "-o", tmp_path / name)
        assert result.returncode == 0, result.stderr  # written: 0, though the runs differ (issue #41)
        made[name] = result.stderr.strip()
    assert made["r.perfetto.json"].endswith("(perfetto)") and made["r.trace.json"].endswith("(perfetto)")
    assert made["r.json"].endswith("(json)") and made["r.md.gz"].endswith("(md)")
    assert "traceEvents" in json.loads((tmp_path / "r.perfetto.json").read_text())
    assert json.loads((tmp_path / "r.json").read_text())["record"] == "fusiondiff diff"
    assert gzip.decompress((tmp_path / "r.md.gz").read_bytes()).startswith(b"**kernel:** ")
    explicit = fusiondiff("report", *OFFSET, "--format", "perfetto", "-o", tmp_path / "plain.json")
    assert explicit.returncode == 0 and "traceEvents" in json.loads((tmp_path / "plain.json").read_text())
    wrong = fusiondiff("report", *OFFSET, "--format", "pdf")
    assert wrong.returncode == 2 and "invalid choice: 'pdf'" in wrong.stderr and "perfetto" in wrong.stderr


def without_live_side(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``fusiondiff ARGS`` in a fresh process whose Python has no torch and no nvFuser: they are
    marked absent in ``sys.modules`` first, so the test means the same where they are installed."""
    bootstrap = (
        "import runpy, sys\n"
        "sys.modules.update(dict.fromkeys(['torch', 'nvfuser_direct']))\n"
        f"sys.argv = ['fusiondiff', *{[str(a) for a in args]!r}]\n"
        "runpy.run_module('fusiondiff', run_name='__main__')\n"
    )
    return subprocess.run([sys.executable, "-c", bootstrap], capture_output=True, text=True, timeout=120, cwd=cwd)


def readme_live_install() -> str:
    """The GPU machine's install command README gives under "Install"."""
    section = (Path(__file__).parent.parent.parent / "README.md").read_text().split("\n## Install\n", 1)[1]
    command = next(
        line.strip() for line in section.splitlines() if line.startswith("    python3 -m pip") and "[live]" in line
    )
    return command.split("#", 1)[0].strip()


def test_the_live_side_is_checked_before_any_work_and_named_in_one_line(tmp_path):
    """Item 4: without torch, ``replay --in-process`` printed a traceback, ``replay`` an "internal
    error", ``roundtrip`` wrote scripts and started workers, ``capture`` named only nvFuser."""
    script = tmp_path / "plain.py"
    script.write_text("print('hi')\n")
    install = readme_live_install()
    runs = {
        "replay": without_live_side("replay", "--in-process", script, "-o", tmp_path / "a.json"),
        "replay ": without_live_side("replay", script, "-o", tmp_path / "b.json"),
        "roundtrip": without_live_side("roundtrip", DATA / "seed" / "live_forward.json", "-o", tmp_path / "rt"),
        "capture": without_live_side("capture", script, "-o", tmp_path / "c.json"),
    }
    for command, result in runs.items():
        line = one_line_error(result, command.strip())
        assert "needs torch and nvFuser (nvfuser_direct), which are not installed in this Python" in line, line
        assert f"`{install}`" in line, line
        assert "internal error" not in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain.py"], "nothing written, no worker's log"


FSDP0 = DATA / "multigpu" / "thunder_fsdp" / "live.rank0.json"


def test_one_fusion_grammar_for_every_command_and_errors_that_name_a_few(tmp_path):
    """Item 5: ``show --fusion '#3'`` failed where ``repro --fusion '#3'`` worked, and a wrong name
    was one 6.8 KB line naming all 544 fusions; ``show --top 5`` said "5 fusion(s)" of 53."""
    shown = fusiondiff("show", FSDP0, "--fusion", "#3")
    assert shown.returncode == 0, shown.stderr
    first = next(line for line in shown.stdout.splitlines() if line.startswith("  #"))
    assert first.startswith("  #3 nvFusion7 [forward]"), first  # the fourth record: names skip odd numbers
    made = fusiondiff("repro", FSDP0, "--fusion", "#3", "-o", tmp_path / "r.py")
    assert made.returncode == 0, made.stderr
    assert "# Repro of fusion forward/nvFusion7/" in (tmp_path / "r.py").read_text()
    named = fusiondiff("show", FSDP0, "--fusion", "nvFusion7 [forward]")
    assert named.returncode == 0 and "  #3 nvFusion7 [forward]" in named.stdout
    report = fusiondiff("report", FSDP0, DATA / "multigpu" / "thunder_fsdp" / "live.rank1.json", "--fusion", "#3")
    assert report.returncode == 0, report.stderr
    assert "narrowed by --fusion #3: 1 of 53 matched fusion(s)" in report.stdout
    for command in (("show", GEMMA / "live.json.gz"), ("repro", GEMMA / "live.json.gz", "-o", tmp_path / "x")):
        line = one_line_error(fusiondiff(*command, "--fusion", "nvFusoin17"), command[0])
        assert "has no fusion 'nvFusoin17'; did you mean nvFusion17 (#" in line, line
        assert len(line) < 400 and line.count("nvFusion") <= 4, line
        assert "It holds 544 records, #0 to #543" in line
    past = one_line_error(fusiondiff("show", FSDP0, "--fusion", "#53"), "show")
    assert "has no fusion #53: it holds 53, #0 to #52" in past
    top = fusiondiff("show", FSDP0, "--top", "5")
    assert top.returncode == 0, top.stderr
    assert "  5 of 53 fusion(s) shown" in top.stdout and "  53 fusion(s)" not in top.stdout
    numbers = [line.split()[0] for line in top.stdout.splitlines() if line.startswith("  #")]
    assert len(numbers) == 5 and numbers != ["#0", "#1", "#2", "#3", "#4"], "each keeps its position"
    check = fusiondiff("show", FSDP0, "--fusion", numbers[0])
    medians = [line for line in top.stdout.splitlines() if line.startswith(f"  {numbers[0]} ")]
    assert medians and medians[0] in check.stdout


def test_help_offers_what_the_commands_take_and_argparse_refuses_the_rest(tmp_path):
    """Item 12: ``capture``'s usage showed ``[-o OUTPUT]`` while required; ``capture --timer``
    offered ``both`` and then refused it; ``report --format`` listed no choices; ``roundtrip
    --isolation`` offered one choice."""
    capture = fusiondiff_process("capture", "--help").stdout
    usage = capture.split("\n\n", 1)[0]
    assert "-o OUTPUT" in usage and "[-o OUTPUT]" not in usage, usage
    assert "{kineto,nvfuser}" in capture and "{kineto,nvfuser,both}" not in capture
    assert "{kineto,nvfuser,both}" in fusiondiff_process("replay", "--help").stdout
    assert "--format {text,json,md,html,perfetto}" in fusiondiff_process("report", "--help").stdout
    roundtrip = fusiondiff_process("roundtrip", "--help").stdout
    assert "--isolation" not in roundtrip and "default 1: a fresh process per fusion" in roundtrip
    script = tmp_path / "s.py"
    script.write_text("print('never run')\n")
    refused = {
        ("capture", "-o", tmp_path / "c.json", "--timer", "both", script): "invalid choice: 'both'",
        ("show", DATA / "seed" / "live_forward.json", "--top", "0"): "--top: 0 is out of range: at least 1",
        ("replay", script, "-o", tmp_path / "r.json", "--samples", "0"): "--samples: 0 is out of range",
        ("roundtrip", DATA / "seed" / "live_forward.json", "-o", tmp_path / "rt", "--batch", "x"): "not an integer",
    }
    for args, says in refused.items():
        result = fusiondiff_process(*args)
        assert result.returncode == 2 and says in result.stderr, (args, result.stderr)
        # argparse refuses it, in one line as fusiondiff's other errors, with where the help is
        assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"fusiondiff {args[0]}: error: ")
        assert result.stderr.rstrip().endswith(f"(see `fusiondiff {args[0]} --help`)"), result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.py"]


def test_report_exits_0_once_written_and_gives_the_diffs_code_with_exit_code(tmp_path):
    """Issue #41: ``report A B -o r.html`` exited 1 after writing its file whenever the sides
    differed, so ``report ... && xdg-open r.html`` never opened it. Now 0 once written; ``--exit-code``
    gives the diff's code, as ``git diff --exit-code`` does; an error stays 2."""
    page = tmp_path / "r.html"
    written = fusiondiff("report", *OFFSET, "-o", page)
    assert written.returncode == 0 and page.stat().st_size > 1000, written.stderr
    assert fusiondiff("diff", *OFFSET).returncode == 1  # the sides differ
    asked = fusiondiff("report", *OFFSET, "-o", tmp_path / "again.html", "--exit-code")
    assert asked.returncode == 1 and (tmp_path / "again.html").is_file(), asked.stderr
    printed = fusiondiff("report", *OFFSET, "--format", "text")
    assert printed.returncode == 0 and printed.stdout.startswith("kernel: ")
    assert fusiondiff("report", *OFFSET, "--format", "text", "--exit-code").returncode == 1
    same = (DATA / "seed" / "live_forward.json", DATA / "seed" / "replay_forward.json")
    assert fusiondiff("report", *same, "-o", tmp_path / "same.md", "--exit-code").returncode == 0
    assert fusiondiff("report", OFFSET[0], "-o", tmp_path / "x.md").returncode == 2  # not a diff record


def test_repro_writes_one_script_per_distinct_fusion_as_the_round_trip_replays_them(tmp_path):
    """Issue #41: ``repro`` on a 530-record session wrote 530 scripts, and ``replay repros/`` replayed
    all of them in one process, where the round trip replays 12 distinct fusions. Now one script per
    distinct fusion (the round trip's plan), named for its first record; ``--every-record``: one per record."""
    from fusiondiff.io.store import load_capture
    from fusiondiff.roundtrip.plan import distinct_fusions

    deep = DATA / "roundtrip_deep" / "live.json.gz"
    capture = load_capture(deep)
    planned = distinct_fusions(capture)
    assert len(capture.fusions) == 530 and len(planned) == 12
    made = fusiondiff("repro", deep, "-o", tmp_path / "distinct")
    assert made.returncode == 0, made.stderr
    scripts = sorted((tmp_path / "distinct").glob("*.py"))
    assert len(scripts) == len(planned)
    headers = {script.read_text().split("# Repro of fusion ", 1)[1].split()[0] for script in scripts}
    assert headers == {capture.fusions[d.index].key for d in planned}  # each for its first record
    said = " ".join(made.stderr.split())  # a note may be wrapped to the width
    assert "530 records, 12 distinct fusion(s)" in said and "--every-record" in said
    every = fusiondiff("repro", deep, "-o", tmp_path / "every", "--every-record")
    assert every.returncode == 0, every.stderr
    assert len(list((tmp_path / "every").glob("*.py"))) == 530
    # one distinct fusion: -o x.py is that one script
    one = fusiondiff("repro", deep, "--fusion", "nvFusion0", "-o", tmp_path / "one.py")
    assert one.returncode == 0 and (tmp_path / "one.py").is_file(), one.stderr
