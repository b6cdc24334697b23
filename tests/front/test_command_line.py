"""The command line: help texts, one-line errors, exit codes, and imports without torch."""

from __future__ import annotations

import subprocess
import sys

import pytest

from fusiondiff.front.cli import main


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fusiondiff", *args], capture_output=True, text=True, timeout=120)


def test_help_lists_every_command():
    result = run("--help")
    assert result.returncode == 0
    for command in ("capture", "replay", "repro", "diff", "show", "report", "demo"):
        assert command in result.stdout


@pytest.mark.parametrize("command", ["capture", "replay", "repro", "diff", "show", "report", "demo"])
def test_each_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    assert "usage: fusiondiff " + command in capsys.readouterr().out


def test_no_command_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "usage" in capsys.readouterr().err


def test_missing_capture_is_one_line_exit_2(tmp_path):
    result = run("show", str(tmp_path / "nope.json"))
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "no such file" in result.stderr
    assert "Traceback" not in result.stderr


def test_import_without_torch():
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import fusiondiff, fusiondiff.front.cli, fusiondiff.records.model, fusiondiff.io.store\n"
        "print(fusiondiff.__version__)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_capture_options_may_follow_the_script():
    from fusiondiff.front.cli import _split_script_args, build_parser

    args = build_parser().parse_args(
        ["capture", "train.py", "--lr", "3", "-o", "live.json", "--samples", "12", "--", "-o", "x"]
    )
    _split_script_args(args)
    assert (args.output, args.samples, args.args) == ("live.json", 12, ["--lr", "3", "-o", "x"])


def test_capture_without_output_is_one_line_exit_2(tmp_path, capsys):
    script = tmp_path / "s.py"
    script.write_text("print('hi')\n")
    assert main(["capture", str(script)]) == 2
    assert "needs -o/--output" in capsys.readouterr().err
