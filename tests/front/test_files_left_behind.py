"""What the command line leaves behind: file modes under the umask, no temporary file after
SIGTERM, one line for Ctrl-C from the first import on, silence for a reader that went away, and
one file per record."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from fusiondiff.io.files import write_text
from fusiondiff.io.store import load_capture, save_capture
from fusiondiff.records.errors import OutputError
from fusiondiff.replay.repro import _file_names, write_repros

ROOT = Path(__file__).resolve().parent.parent.parent
RECORDED = ROOT / "tests" / "data" / "seed" / "live_backward.json"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077, 0o002])
def test_written_files_get_the_mode_the_umask_gives_also_over_a_0755_file(tmp_path, umask):
    old = os.umask(umask)
    try:
        write_text(tmp_path / "new.json", "{}")
        (tmp_path / "old.json").write_text("")
        (tmp_path / "old.json").chmod(0o755)
        write_text(tmp_path / "old.json", "{}")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "new.json") == 0o666 & ~umask
    assert _mode(tmp_path / "old.json") == 0o666 & ~umask


def test_a_symbolic_link_is_refused_never_written_through(tmp_path):
    (tmp_path / "real.json").write_text("old")
    (tmp_path / "link.json").symlink_to("real.json")
    with pytest.raises(OutputError, match="symbolic link"):
        write_text(tmp_path / "link.json", "new")
    assert (tmp_path / "link.json").is_symlink()
    assert (tmp_path / "real.json").read_text() == "old"


def test_a_link_to_a_device_is_written_as_the_device(tmp_path):
    (tmp_path / "null").symlink_to("/dev/null")
    write_text(tmp_path / "null", "gone")
    assert (tmp_path / "null").is_symlink()


SLOW_WRITE = textwrap.dedent(
    """
    import pathlib, sys, time
    from fusiondiff.front.cli import main

    def slowly(write):
        def slow(self, *args, **kwargs):  # the write is under way when SIGTERM comes
            write(self, *args, **kwargs)
            print(f"writing {self}", file=sys.stderr, flush=True)
            # short sleeps: a SIGTERM landing after print() returned and before one sleep began
            # wakes no sleep, and its handler waits for the sleep to end (seen: one 60 s sleep)
            for _ in range(600):
                time.sleep(0.1)

        return slow

    # a repro script is written as bytes (then read back and proven), other outputs as text
    pathlib.Path.write_text = slowly(pathlib.Path.write_text)
    pathlib.Path.write_bytes = slowly(pathlib.Path.write_bytes)
    sys.exit(main(sys.argv[1:]))
    """
)


def test_sigterm_during_a_write_leaves_no_temporary_file(tmp_path):
    out = tmp_path / "r.py"
    child = subprocess.Popen(
        [sys.executable, "-c", SLOW_WRITE, "repro", str(RECORDED), "-o", str(out)],
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    try:
        line = child.stderr.readline()  # type: ignore[union-attr]
        temporary = Path(line.removeprefix("writing ").strip())
        assert temporary.parent == tmp_path and temporary.exists(), line
        child.send_signal(signal.SIGTERM)
        rest = child.stderr.read()  # type: ignore[union-attr]
        assert child.wait(timeout=30) == 143
    finally:
        child.kill()
    assert rest == "fusiondiff repro: terminated\n"
    assert list(tmp_path.iterdir()) == []


INTERRUPT_AT_IMPORT = textwrap.dedent(
    """
    import os, runpy, signal, sys

    MODULE = sys.argv[1]

    class Interrupt:  # Ctrl-C (a real SIGINT) just as this module starts importing
        def find_spec(self, name, path=None, target=None):
            if name == MODULE:
                sys.meta_path.remove(self)
                os.kill(os.getpid(), signal.SIGINT)
            return None

    sys.meta_path.insert(0, Interrupt())
    sys.argv = ["fusiondiff", *sys.argv[2:]]
    runpy.run_module("fusiondiff", run_name="__main__", alter_sys=True)
    """
)


@pytest.mark.parametrize(
    "module",
    [
        "fusiondiff.front.cli",
        "argparse",
        "fusiondiff.records.errors",
        "fusiondiff.records.model",
        "fusiondiff.io.store",
        "json",
        "fusiondiff.records.codec",
        "fusiondiff.diff.core",
        "fusiondiff.report.formats.diff_text",
    ],
)
def test_ctrl_c_while_modules_import_is_one_line_and_130(module):
    result = subprocess.run(
        [sys.executable, "-c", INTERRUPT_AT_IMPORT, module, "diff", str(RECORDED), str(RECORDED)],
        check=False,
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
    )
    assert "Traceback" not in result.stderr
    assert result.returncode == 130
    assert result.stderr in ("fusiondiff: interrupted\n", "fusiondiff diff: interrupted\n")


def test_a_reader_that_stops_reading_gets_silence(tmp_path):
    child = subprocess.Popen(
        [sys.executable, "-m", "fusiondiff", "show", str(RECORDED)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    child.stdout.close()  # type: ignore[union-attr]  # like `| head -0`
    err = child.stderr.read().decode()  # type: ignore[union-attr]
    assert child.wait(timeout=60) == 2
    assert err == ""


def _twins(tmp_path: Path) -> Path:
    """One region run with an aligned and a misaligned first input: same name, same definition."""
    capture = load_capture(RECORDED)
    first = capture.fusions[0]
    second = replace(first, inputs=(replace(first.inputs[0], alignment_bytes=2), *first.inputs[1:]))
    assert second.key == first.key
    return save_capture(replace(capture, fusions=(first, second)), tmp_path / "twins.json")


def test_every_record_of_a_shared_key_is_written_to_its_own_file(tmp_path):
    path = _twins(tmp_path)
    written = write_repros(path, tmp_path / "out")
    assert len(written) == 2 and len(set(written)) == 2
    assert "check_alignment(0, inputs[-1], 256)" in written[0].read_text()
    assert "check_alignment(0, inputs[-1], 2)" in written[1].read_text()
    # each keeps its name when chosen alone
    assert write_repros(path, tmp_path / "out", fusion="#1") == [written[1]]


def test_file_names_are_unique_ignoring_case_and_short():
    capture = load_capture(RECORDED)
    f = capture.fusions[0]

    def named(name: str, digest: str = "a" * 64):
        return replace(f, name=name, definition_hash=digest)

    names = _file_names([named("nvFusion0"), named("NVFUSION0", "b" * 64), named("x" * 500), named("nvFusion0")])
    assert len({n.lower() for n in names}) == 4
    assert all(len(n) < 120 and n.endswith(".py") for n in names)
    # a name made unique by a suffix met another record's own name: all are numbered
    names = _file_names([named("a"), named("a"), named("a_" + "a" * 12 + "_1")])
    assert len({n.lower() for n in names}) == 3
