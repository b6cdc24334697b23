"""The harness of the bad-input battery (``tests/front/test_bad_inputs.py``): what a case is, the
mutations of the recorded capture, the set-ups of a case's directory, the checks after a run, and
:func:`run_case`, which runs one case through the real command line: in the test's process where
the case asks nothing of a fresh one (:func:`in_process`: most cases; a fresh interpreter costs a
second of imports under load), else in a fresh process, as a user starts it (the cases of the
process's own streams, its environment and limits, the console script, and the commands that start
processes, and those that could hang: about a third).

A case is one :class:`Case`: a name, the command (``{cap}`` is the mutated capture, ``{other}``
an untouched copy of the recording, ``{tmp}`` the case's directory), the mutation of the recorded
JSON, the exit code, and a regex for the one line expected on stderr (``None``: stderr stays
empty). Every case also asserts: no traceback; every line on stdout and stderr printable (nothing
from a capture acts on the terminal); a failure is exactly ``fusiondiff <command>: error: ...``;
and no file that existed before the command changed.
"""

from __future__ import annotations

import ast
import atexit
import contextlib
import copy
import functools
import hashlib
import io
import json
import os
import re
import resource
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import tokenize
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from inprocess import notes

ROOT = Path(__file__).resolve().parent.parent
RECORDED = ROOT / "tests" / "data" / "seed" / "live_backward.json"
"""A small capture recorded on the H200: one backward fusion, four inputs, two kernels."""
RECORDED_DATA = json.loads(RECORDED.read_text())
D = RECORDED_DATA["fusions"][0]["definition"]
"""Its definition, for mutations of it."""
IS_ROOT = os.geteuid() == 0
PAYLOAD = "PWNED"
"""Injected code calls this name: a script is safe when it never appears as a name token."""

Mutation = Callable[[Any], Any]
COMMUNICATION = {
    "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
    "calls": 2,
    "samples_ns": [1000.0, 3000.0],
    "total_ns": 4000.0,
    "stream": 13,
    "launch": None,
}
"""SYNTHETIC: one all-reduce's record, to be damaged (the recording above was not made under torchrun)."""


# --------------------------------------------------------------------------------------------
# Mutations of the recorded JSON (each returns the new data, or bytes for the whole file)


def _walk(data: Any, path: str) -> tuple[Any, str | int]:
    keys: list[str | int] = [int(k) if k.lstrip("-").isdigit() else k for k in path.split(".")]
    for key in keys[:-1]:
        data = data[key]
    return data, keys[-1]


def put(path: str, value: Any) -> Mutation:
    """Set the value at a dotted path (``fusions.0.timing.samples_ns.3``)."""

    def mutate(data: Any) -> Any:
        parent, key = _walk(data, path)
        parent[key] = value
        return data

    return mutate


def drop(path: str) -> Mutation:
    def mutate(data: Any) -> Any:
        parent, key = _walk(data, path)
        del parent[key]
        return data

    return mutate


def both(*mutations: Mutation) -> Mutation:
    def mutate(data: Any) -> Any:
        for m in mutations:
            data = m(data)
        return data

    return mutate


def twin(*mutations: Mutation) -> Mutation:
    """Append a copy of fusion 0 with ``mutations`` applied to the copy (paths relative to it)."""

    def mutate(data: Any) -> Any:
        other = copy.deepcopy(data["fusions"][0])
        for m in mutations:
            other = m(other)
        data["fusions"].append(other)
        return data

    return mutate


def definition(text: str) -> Mutation:
    return put("fusions.0.definition", text)


def body(line: str) -> str:
    """The recorded definition with ``line`` inserted before its first output."""
    return D.replace("    fd.add_output", f"    {line}\n    fd.add_output", 1)


def whole(content: str | bytes) -> Mutation:
    """Replace the whole file."""
    return lambda data: content.encode() if isinstance(content, str) else content


def scalar(value: str | None, dtype: str = "float") -> Mutation:
    """Make input 3 a scalar with this value text."""
    meta = {"index": 3, "kind": "scalar", "dtype": dtype, "scalar_value": value}
    return put("fusions.0.inputs.3", meta)


# --------------------------------------------------------------------------------------------
# Set-ups of the case's directory (they get the directory and the capture's path)


def fifo(name: str) -> Callable[[Path, Path], None]:
    return lambda tmp, cap: os.mkfifo(tmp / name)


def sparse(name: str, size: int) -> Callable[[Path, Path], None]:
    def setup(tmp: Path, cap: Path) -> None:
        with open(tmp / name, "wb") as f:
            f.truncate(size)

    return setup


def link(name: str, hard: bool = False) -> Callable[[Path, Path], None]:
    return lambda tmp, cap: (os.link if hard else os.symlink)(cap, tmp / name)


def script(name: str) -> Callable[[Path, Path], None]:
    return lambda tmp, cap: (tmp / name).write_text("print('the user script')\n")


def read_only_dir(name: str) -> Callable[[Path, Path], None]:
    def setup(tmp: Path, cap: Path) -> None:
        (tmp / name).mkdir()
        (tmp / name).chmod(0o555)

    return setup


def unreadable(tmp: Path, cap: Path) -> None:
    cap.chmod(0)


def saved_inputs(sizes: dict[str, int] | None = None, raw: bytes | None = None) -> Callable[[Path, Path], None]:
    """SYNTHETIC: ``cap.tensors.safetensors`` with a tensor of each byte size (sparse: the zeros
    are never written, and the script is never run here), or ``raw`` bytes."""

    def setup(tmp: Path, cap: Path) -> None:
        path = tmp / "cap.tensors.safetensors"
        if raw is not None:
            path.write_bytes(raw)
            return
        header, offset = {}, 0
        for key, size in (sizes or {}).items():
            header[key] = {"dtype": "U8", "shape": [size], "data_offsets": [offset, offset + size]}
            offset += size
        text = json.dumps(header).encode()
        with open(path, "wb") as file:
            file.write(struct.pack("<Q", len(text)) + text)
            file.truncate(8 + len(text) + offset)

    return setup


# --------------------------------------------------------------------------------------------
# Checks after a run


@dataclass(frozen=True)
class Run:
    tmp: Path
    stdout: str
    stderr: str


def python_reads(path: Path) -> tuple[str, ast.Module]:
    """What the interpreter reads from a script file: the text decoded with the codec its first
    two lines declare (``tokenize.detect_encoding``), and the syntax tree of the bytes."""
    data = path.read_bytes()
    encoding, _ = tokenize.detect_encoding(iter(data.splitlines(keepends=True)).__next__)
    tree = compile(data, str(path), "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    return data.decode(encoding), tree


def script_safe(name: str) -> Callable[[Run], None]:
    """The written script compiles as Python reads it (its bytes, with the codec they declare),
    and the payload never became code there: no name of it in the tree Python reads, no NAME
    token of it in the text Python decodes."""

    def check(run: Run) -> None:
        source, tree = python_reads(run.tmp / name)
        assert PAYLOAD not in {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        assert PAYLOAD not in {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        lines = iter(source.splitlines(keepends=True))
        names = {t.string for t in tokenize.generate_tokens(lambda: next(lines, "")) if t.type == tokenize.NAME}
        assert PAYLOAD not in names
        assert all(line.isprintable() for line in source.splitlines())

    return check


def report_printed(run: Run) -> None:
    lines = run.stdout.splitlines()
    assert [line.split(":", 1)[0] for line in lines if not line.startswith(" ")][:3] == ["kernel", "host", "fidelity"]


def shows(text: str) -> Callable[[Run], None]:
    def check(run: Run) -> None:
        assert text in run.stdout

    return check


def script_has(name: str, text: str) -> Callable[[Run], None]:
    def check(run: Run) -> None:
        assert text in (run.tmp / name).read_text()

    return check


def directory(name: str) -> Callable[[Path, Path], None]:
    return lambda tmp, cap: (tmp / name).mkdir()


# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    group: str
    name: str
    command: str
    mutate: Mutation | None
    code: int
    stderr: str | None
    """Regex searched in the one stderr line; ``None``: nothing on stderr."""
    setup: Callable[[Path, Path], None] | None = None
    check: Callable[[Run], None] | None = None
    stdout_to: str | None = None
    """A file to send stdout to (``/dev/full``) instead of a pipe."""
    close: tuple[int, ...] = ()
    """Standard descriptors the command starts without (``1``: ``>&-``, ``2``: ``2>&-``)."""
    file_size_limit: int | None = None
    """RLIMIT_FSIZE in bytes: writes past it fail with EFBIG."""
    needs_non_root: bool = False
    """Permission bits do not stop root: skipped there (other cases cover unwritable places)."""
    progress: str | None = None
    """A prefix of progress lines (``fusiondiff roundtrip: ``) allowed on stderr besides the one line."""
    console: bool = False
    """Run through the ``fusiondiff`` console script (the installed entry point) instead of
    ``python -m fusiondiff``."""
    env: dict[str, str] = field(default_factory=dict)
    """More environment for the command (``{tmp}`` is the case's directory); ``PYTHONPATH`` is
    put before the project's own."""


REPRO = "repro {cap} -o {tmp}/r.py"
DIFF = "diff {other} {cap}"
SHOW = "show {cap}"
DEF_ERR = r"the definition of backward/nvFusion13/\w+: line \d+: not allowed in a definition: "


def _snapshot(tmp: Path) -> dict[Path, str]:
    """What each regular file holds (small ones by content, large sparse ones by size)."""
    found = {}
    for path in tmp.rglob("*"):
        if path.is_file() and not path.is_symlink():
            size = path.stat().st_size
            found[path] = f"size {size}" if size > 2**20 else hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def _prepare(case: Case, tmp: Path) -> Path:
    cap = tmp / "cap.json"
    data = copy.deepcopy(RECORDED_DATA)
    content = case.mutate(data) if case.mutate else data
    cap.write_bytes(content if isinstance(content, bytes) else json.dumps(content, indent=1).encode())
    (tmp / "other.json").write_bytes(RECORDED.read_bytes())
    return cap


def _limit_file_size(limit: int | None) -> Callable[[], None] | None:
    if limit is None:
        return None
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def _command(case: Case, argv: list[str]) -> list[str]:
    if not case.console:
        return [sys.executable, "-m", "fusiondiff", *argv]
    script = Path(sys.executable).with_name("fusiondiff")
    if not script.is_file():
        pytest.skip("the fusiondiff console script is not installed beside this interpreter")
    return [str(script), *argv]


@functools.cache
def _live_stand_ins() -> Path:
    """A folder holding stand-ins for torch and nvFuser: the round trip checks that the live side is
    installed before it writes anything, and these pass that check, so its cases test what it does
    with its folder on this torch-less machine too. They import at once (a replay process imports
    both before its turn) and say there is one GPU; any other name used from them waits, so every
    replay runs past the cases' short timeout once its turn has come, as a real one would."""
    folder = Path(tempfile.mkdtemp(prefix="fusiondiff-stand-ins-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    waits = (
        "import time\n\n\n"
        "def __getattr__(name):\n"
        "    if name.startswith('__'):\n"
        "        raise AttributeError(name)\n"
        "    time.sleep(60)\n"
    )
    # the round trip itself asks torch how many GPUs it sees: one
    gpus = "\n\nclass cuda:\n    @staticmethod\n    def device_count():\n        return 1\n"
    for name, text in (("torch", waits + gpus), ("nvfuser_direct", waits)):
        (folder / name).mkdir()
        (folder / name / "__init__.py").write_text(text)
    return folder


def _environment(case: Case, tmp: Path) -> dict[str, str]:
    extra = {k: v.format(tmp=tmp) for k, v in case.env.items()}
    stand_ins = str(_live_stand_ins()) if case.command.startswith("roundtrip ") else ""
    path = os.pathsep.join(p for p in (extra.pop("PYTHONPATH", ""), stand_ins, str(ROOT)) if p)
    return {**os.environ, **extra, "PYTHONPATH": path}


def _preexec(case: Case) -> Callable[[], None] | None:
    limit = _limit_file_size(case.file_size_limit)
    if not case.close:
        return limit

    def closed_streams() -> None:
        if limit is not None:
            limit()
        for fd in case.close:
            os.close(fd)

    return closed_streams


PROCESS_GROUPS = frozenset({"streams", "ambiguous", "surrogate", "hangs"})
"""Classes whose cases are about the process itself (its standard streams, Ctrl-C as it starts,
what its stdout's encoder takes), or would stop the suite if they failed (a command that hangs:
the fresh process has a timeout): each runs in a fresh one."""
PROCESS_COMMANDS = frozenset({"roundtrip", "replay", "capture"})
"""Commands that start processes of their own, or need the live side's stand-ins on the path."""


def in_process(case: Case) -> bool:
    """Whether ``case`` runs in the test's own process (:func:`run_here`): it asks nothing of a
    fresh one (no environment, console script, closed descriptor, file-size limit or stdout file;
    no command that starts processes; no class about the process). A fresh interpreter costs a
    second of imports under load and tells these cases nothing more."""
    special = case.env or case.console or case.close or case.file_size_limit is not None or case.stdout_to
    return not special and case.group not in PROCESS_GROUPS and case.command.split()[0] not in PROCESS_COMMANDS


def run_here(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    """``fusiondiff ARGV`` run in ``cwd`` by :func:`fusiondiff.front.cli.main` in this process: its
    exit code, stdout and stderr. The streams encode UTF-8 strictly, as a process's do under a
    UTF-8 locale: text no encoder takes fails here as it would there."""
    from fusiondiff.front.cli import main

    out, err = (io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", write_through=True) for _ in "12")
    here = os.getcwd()
    try:
        os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse's refusals
                code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    finally:
        os.chdir(here)
    return code, *(s.buffer.getvalue().decode("utf-8") for s in (out, err))  # type: ignore[attr-defined]


def run_case(case: Case, tmp_path: Path) -> None:
    """Run ``case`` in ``tmp_path`` through the real command line and check everything a case
    asserts (see the module docstring): in this process where the case asks nothing of a fresh
    one (:func:`in_process`), else in a fresh process."""
    if case.needs_non_root and IS_ROOT:
        pytest.skip("permission bits do not stop root")
    cap = _prepare(case, tmp_path)
    before = _snapshot(tmp_path)
    if case.setup:
        case.setup(tmp_path, cap)
    argv = shlex.split(case.command.format(cap=cap, other=tmp_path / "other.json", tmp=tmp_path))
    if in_process(case):
        try:
            returncode, out, err = run_here(argv, tmp_path)
        finally:
            cap.chmod(0o644)
    else:
        returncode, out, err = _run_fresh(case, argv, tmp_path, cap)
    assert "Traceback" not in out + err, err
    assert returncode == case.code, err
    notes = _notes_without_progress(err, case.progress)
    if case.stderr is None:
        assert notes == [], err
    else:
        assert len(notes) == 1 and err.endswith("\n"), err
        if case.code == 2:  # an error is one line, never wrapped
            assert len(notes[0]) == 1, err
            assert re.match(rf"fusiondiff {argv[0]}: error: ", notes[0][0]), notes[0][0]
        said = " ".join(line.strip() for line in notes[0])  # a note read with its continuation lines
        assert re.search(case.stderr, said), said
    assert all(line.isprintable() for line in out.splitlines() + err.splitlines())
    assert _snapshot(tmp_path).items() >= before.items(), "a file that existed before the command changed"
    assert not list(tmp_path.rglob("*.tmp")), "a temporary file was left behind"
    if case.check:
        # a check asserts; one that returns a value (a lambda's bool) would check nothing
        assert case.check(Run(tmp_path, out, err)) is None, "a check must assert, not return"


def _notes_without_progress(err: str, prefix: str | None) -> list[list[str]]:
    """stderr as notes, each a line and the lines indented 4 spaces under it that fitting it to the
    terminal's width made, less the progress notes: those that begin with ``prefix`` (read with
    their continuation joined, so a prefix longer than the width still matches). An error is never
    wrapped: the caller checks that its note is one line."""
    return [note for note in notes(err) if not (prefix and " ".join(" ".join(note).split()).startswith(prefix))]


def _run_fresh(case: Case, argv: list[str], tmp_path: Path, cap: Path) -> tuple[int, str, str]:
    """``case``'s command in a fresh process, as a user starts it: its exit code, stdout and stderr."""
    to_file = case.stdout_to is not None
    stdout = open(case.stdout_to, "w") if to_file else subprocess.PIPE  # type: ignore[arg-type]  # noqa: SIM115
    try:
        result = subprocess.run(
            _command(case, argv),
            check=False,
            stdout=stdout,
            stderr=subprocess.PIPE,
            cwd=tmp_path,
            timeout=120,
            env=_environment(case, tmp_path),
            preexec_fn=_preexec(case),
        )
    finally:
        if to_file:
            stdout.close()  # type: ignore[union-attr]
        cap.chmod(0o644)
    return result.returncode, result.stdout.decode("utf-8") if result.stdout else "", result.stderr.decode("utf-8")
