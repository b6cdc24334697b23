"""The bad-input battery: captures mutated from a recording, output faults and hostile text, each
run through the real command line in a fresh process.

A case is one line of ``CASES``: a name, the command (``{cap}`` is the mutated capture, ``{other}``
an untouched copy of the recording, ``{tmp}`` the case's directory), the mutation of the recorded
JSON, the exit code, and a regex for the one line expected on stderr (``None``: stderr stays
empty). Every case also asserts: no traceback; every line on stdout and stderr printable (nothing
from a capture acts on the terminal); a failure is exactly ``fusiondiff <command>: error: ...``;
and no file that existed before the command changed.

The classes follow issue #12: code from a capture reaching a script (``code``), records lost
(``records``), output faults (``output``), crafted JSON (``json``), impossible values
(``values``), outputs over inputs (``overwrite``), terminal safety (``terminal``), and the
failures handled before it (``handled``).
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import os
import re
import resource
import shlex
import subprocess
import sys
import tokenize
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

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


def tensors_beside(tmp: Path, cap: Path) -> None:
    """Only the file's presence matters: the script is never run here."""
    (tmp / "cap.tensors.safetensors").write_bytes(b"")


# --------------------------------------------------------------------------------------------
# Checks after a run


@dataclass(frozen=True)
class Run:
    tmp: Path
    stdout: str
    stderr: str


def script_safe(name: str) -> Callable[[Run], None]:
    """The written script compiles, and the payload never became code (no NAME token of it)."""

    def check(run: Run) -> None:
        source = (run.tmp / name).read_text()
        compile(source, name, "exec")
        names = {t.string for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.NAME}
        assert PAYLOAD not in names
        assert all(line.isprintable() for line in source.splitlines())

    return check


def report_printed(run: Run) -> None:
    assert run.stdout.startswith("fusiondiff diff\n") and "verdict:" in run.stdout


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
    file_size_limit: int | None = None
    """RLIMIT_FSIZE in bytes: writes past it fail with EFBIG."""
    needs_non_root: bool = False
    """Permission bits do not stop root: skipped there (other cases cover unwritable places)."""


REPRO = "repro {cap} -o {tmp}/r.py"
DIFF = "diff {other} {cap}"
SHOW = "show {cap}"
DEF_ERR = r"the definition of backward/nvFusion13/\w+: line \d+: not allowed in a definition: "

CASES = [
    # -- code: nothing from a capture becomes code in a written script --------------------------
    Case("code", "import before the def", REPRO, definition("import os\n" + D), 2, DEF_ERR + "an import outside"),
    Case("code", "statement after the def", REPRO, definition(D + "PWNED()\n"), 2, DEF_ERR + "an expression outside"),
    Case("code", "call inside the def", REPRO, definition(body("PWNED()")), 2, DEF_ERR + r"calling 'PWNED'"),
    Case(
        "code", "import inside the def", REPRO, definition(body("import os")), 2, DEF_ERR + "an import in the function"
    ),
    Case("code", "decorator", REPRO, definition("@PWNED\n" + D), 2, DEF_ERR + "a decorator"),
    Case(
        "code",
        "default argument call",
        REPRO,
        definition(D.replace("(fd : FusionDefinition)", "(fd=PWNED())")),
        2,
        DEF_ERR + "parameters other than `fd`",
    ),
    Case(
        "code",
        "annotation call",
        REPRO,
        definition(D.replace(": FusionDefinition)", ": PWNED())")),
        2,
        DEF_ERR + "an annotation",
    ),
    Case(
        "code",
        "lambda argument",
        REPRO,
        definition(body("fd.add_output((lambda: PWNED())())")),
        2,
        DEF_ERR + "calling 'lambda",
    ),
    Case(
        "code",
        "comprehension argument",
        REPRO,
        definition(body("fd.add_output([PWNED() for _ in ()])")),
        2,
        DEF_ERR + "a comprehension",
    ),
    Case(
        "code", "f-string argument", REPRO, definition(body("fd.add_output(f'{PWNED()}')")), 2, DEF_ERR + "an f-string"
    ),
    Case(
        "code",
        "attribute of another name",
        REPRO,
        definition(body("fd.add_output(os.environ)")),
        2,
        DEF_ERR + "the attribute 'os.environ'",
    ),
    Case(
        "code",
        "dunder of fd",
        REPRO,
        definition(body("fd.__class__.PWNED()")),
        2,
        DEF_ERR + "calling 'fd.__class__.PWNED'",
    ),
    Case(
        "code",
        "semicolon statement",
        REPRO,
        definition(D.replace("fd.add_output(", "PWNED(); fd.add_output(", 1)),
        2,
        DEF_ERR + "calling 'PWNED'",
    ),
    Case(
        "code",
        "bare carriage return",
        REPRO,
        definition(D.replace("\n    tv1", "\r    tv1", 1)),
        2,
        DEF_ERR + r"character '\\r'",
    ),
    Case("code", "NUL byte", REPRO, definition(D.replace("4096", "4096\x00", 1)), 2, DEF_ERR + r"character '\\x00'"),
    Case("code", "walrus", REPRO, definition(body("fd.add_output((x := 1))")), 2, DEF_ERR + "an assignment expression"),
    Case(
        "code",
        "rebinding DataType",
        REPRO,
        definition(body("DataType = fd.ops.neg(tv0)")),
        2,
        DEF_ERR + "rebinding the name 'DataType'",
    ),
    Case(
        "code",
        "line break in the GPU name",
        REPRO,
        put("environment.gpu_name", "H200\nPWNED()"),
        0,
        r"^wrote .*r\.py$",
        check=script_safe("r.py"),
    ),
    Case(
        "code",
        "bare CR in recorded_at",
        REPRO,
        put("environment.recorded_at", "now\rPWNED()"),
        0,
        r"^wrote",
        check=script_safe("r.py"),
    ),
    Case(
        "code",
        "line break in the trace",
        REPRO,
        put("fusions.0.trace", "backward\nPWNED()"),
        0,
        r"^wrote",
        check=script_safe("r.py"),
    ),
    Case(
        "code",
        "line break in the compute capability",
        REPRO,
        put("environment.compute_capability", "9.0\nPWNED()"),
        0,
        r"^wrote",
        check=script_safe("r.py"),
    ),
    Case(
        "code",
        "line break in a scalar's dtype",
        REPRO,
        scalar("2.0", dtype="float\nPWNED()"),
        0,
        r"^wrote",
        check=script_safe("r.py"),
    ),
    Case(
        "code",
        "quote in an NVFUSER_ value",
        REPRO,
        put("environment.nvfuser_env", {"NVFUSER_DUMP": "x'); PWNED(); ('"}),
        0,
        r"^wrote",
        check=script_safe("r.py"),
    ),
    Case(
        "code",
        "code in an NVFUSER_ name",
        REPRO,
        put("environment.nvfuser_env", {"NVFUSER_X'] = 1; PWNED() #": "1"}),
        2,
        r"variable .* is not allowed in a script",
    ),
    Case(
        "code",
        "code in a device",
        REPRO,
        put("fusions.0.inputs.0.device", "cuda:0'); PWNED(); ('"),
        2,
        r"input 0: device .* is not allowed in a script",
    ),
    Case(
        "code",
        "code in a dtype",
        REPRO,
        put("fusions.0.inputs.0.dtype", "torch.float32); PWNED(); (0"),
        2,
        r"input 0 has dtype .* not a torch dtype",
    ),
    Case(
        "code",
        "code in a tensor key",
        REPRO,
        put("fusions.0.inputs.0.tensor_key", "k'); PWNED(); ('"),
        2,
        r"tensor key .* is not allowed in a script",
        setup=tensors_beside,
    ),
    Case(
        "code",
        "code in an option",
        REPRO,
        put("fusions.0.enable_options", ["x']); PWNED(); (['"]),
        2,
        r"enable_options: option .* is not allowed",
    ),
    Case(
        "code",
        "code in a scalar value",
        REPRO,
        scalar("__import__('os').system('PWNED')"),
        2,
        r"input 3 has scalar value .* not a number",
    ),
    Case("code", "scalar nested to exhaust the parser", REPRO, scalar("-" * 100000 + "1"), 2, r"not a number"),
    Case(
        "code",
        "tensors file outside the capture's directory",
        REPRO,
        put("tensors_file", "../../etc/passwd"),
        2,
        r"tensors_file .* is not a file name beside the capture",
    ),
    # -- records: every record is written and selectable -----------------------------------------
    Case(
        "records",
        "twin records: the second by #1",
        "repro {cap} -o {tmp}/r.py --fusion #1",
        twin(put("inputs.0.alignment_bytes", 2)),
        0,
        r"^wrote .*r\.py$",
        check=script_has("r.py", "check_alignment(0, inputs[-1], 2)"),
    ),
    Case(
        "records",
        "twin records: the first by #0",
        "repro {cap} -o {tmp}/r.py --fusion #0",
        twin(put("inputs.0.alignment_bytes", 2)),
        0,
        r"^wrote",
        check=script_has("r.py", "check_alignment(0, inputs[-1], 256)"),
    ),
    Case(
        "records",
        "twin records: the shared key names both",
        "repro {cap} -o {tmp}/r.py --fusion backward/nvFusion13",
        twin(put("inputs.0.alignment_bytes", 2)),
        2,
        r"names 2 fusions .*: #0 backward/nvFusion13/\w+, #1 .*; give the key or #N",
    ),
    Case(
        "records",
        "#N past the end",
        "repro {cap} -o {tmp}/r.py --fusion #5",
        None,
        2,
        r"has no fusion #5: it holds 1, #0 to #0",
    ),
    Case(
        "records",
        "one twin into a directory keeps its own name",
        "repro {cap} -o {tmp}/out --fusion #1",
        twin(put("inputs.0.alignment_bytes", 2)),
        0,
        r"^wrote .*/out/backward_nvFusion13_[0-9a-f]{12}_1\.py$",
        setup=directory("out"),
    ),
    # -- output: faults of the file system and of stdout -----------------------------------------
    Case(
        "output",
        "unwritable directory (sysfs)",
        "repro {cap} -o /sys/r.py",
        None,
        2,
        r"cannot write /sys/r\.py: (Permission denied|Operation not permitted)$",
    ),
    Case(
        "output",
        "directory that cannot be made",
        "repro {cap} -o /sys/fusiondiff/r.py",
        None,
        2,
        r"cannot write /sys/fusiondiff/r\.py: (Permission denied|Operation not permitted) \(/sys/fusiondiff\)",
    ),
    Case(
        "output",
        "read-only directory",
        "repro {cap} -o {tmp}/ro/r.py",
        None,
        2,
        r"cannot write .*/ro/r\.py: Permission denied",
        setup=read_only_dir("ro"),
        needs_non_root=True,
    ),
    Case(
        "output",
        "output under a file",
        "repro {cap} -o {cap}/r.py",
        None,
        2,
        r"cannot write .*cap\.json/r\.py: .*cap\.json is not a directory",
    ),
    Case(
        "output", "full device", "repro {cap} -o /dev/full", None, 2, r"cannot write /dev/full: No space left on device"
    ),
    Case("output", "file-size limit", REPRO, None, 2, r"cannot write .*r\.py: File too large", file_size_limit=1024),
    Case(
        "output",
        "show to a full stdout",
        SHOW,
        None,
        2,
        r"^fusiondiff show: error: cannot write the report to stdout: No space left on device$",
        stdout_to="/dev/full",
    ),
    Case(
        "output",
        "diff to a full stdout",
        DIFF,
        None,
        2,
        r"cannot write the report to stdout: No space left on device",
        stdout_to="/dev/full",
    ),
    Case(
        "output",
        "diff --json a directory",
        DIFF + " --json {tmp}",
        None,
        2,
        r"cannot write .*: it is a directory",
        check=report_printed,
    ),
    Case(
        "output",
        "diff --json under a file",
        DIFF + " --json {other}/d.json",
        None,
        2,
        r"other\.json is not a directory",
        check=report_printed,
    ),
    Case(
        "output",
        "diff --json a full device",
        DIFF + " --json /dev/full",
        None,
        2,
        r"cannot write /dev/full: No space left on device",
        check=report_printed,
    ),
    Case(
        "output",
        "diff --json past the file-size limit",
        DIFF + " --json {tmp}/d.json",
        None,
        2,
        r"cannot write .*d\.json: File too large",
        check=report_printed,
        file_size_limit=512,
    ),
    # -- json: crafted files the decoder must survive ---------------------------------------------
    Case(
        "json",
        "integer of 5000 digits",
        SHOW,
        whole(RECORDED.read_text().replace('"call_count": 1,', '"call_count": ' + "1" * 5000 + ",")),
        2,
        r"cap\.json is not a fusiondiff capture \(an integer has 5000 digits\)",
    ),
    Case(
        "json",
        "integer of 41 digits",
        SHOW,
        put("fusions.0.inputs.0.storage_offset", 10**40),
        2,
        r"an integer has 41 digits",
    ),
    Case(
        "json",
        "integer past 64 bits",
        SHOW,
        put("fusions.0.inputs.0.storage_numel", 2**64),
        2,
        r"fusions\[0\]\.inputs\[0\]\.storage_numel: 18446744073709551616 does not fit in 64 bits",
    ),
    Case(
        "json",
        "number too large for a float",
        SHOW,
        whole(RECORDED.read_text().replace('"samples_ns": [', '"samples_ns": [1e400, ', 1)),
        2,
        r"the number 1e400 is too large for a float",
    ),
    Case(
        "json",
        "negative number too large",
        SHOW,
        whole(RECORDED.read_text().replace('"samples_ns": [', '"samples_ns": [-1e999, ', 1)),
        2,
        r"the number -1e999 is too large",
    ),
    Case(
        "json",
        "NaN token",
        SHOW,
        whole(RECORDED.read_text().replace('"samples_ns": [', '"samples_ns": [NaN, ', 1)),
        2,
        r"NaN is not a JSON number",
    ),
    Case(
        "json",
        "Infinity token",
        SHOW,
        whole(RECORDED.read_text().replace('"samples_ns": [', '"samples_ns": [Infinity, ', 1)),
        2,
        r"Infinity is not a JSON number",
    ),
    Case(
        "json",
        "arrays nested 100,000 deep",
        SHOW,
        whole("[" * 100000 + "]" * 100000),
        2,
        r"not a fusiondiff capture \(JSON nested too deeply\)",
    ),
    Case(
        "json",
        "objects nested 100,000 deep",
        SHOW,
        whole('{"a":' * 100000 + "1" + "}" * 100000),
        2,
        r"JSON nested too deeply",
    ),
    Case(
        "json",
        "nesting inside a field",
        SHOW,
        whole(RECORDED.read_text().replace('"warnings": [', '"warnings": [' + "[" * 50000 + "]" * 50000 + ", ", 1)),
        2,
        r"JSON nested too deeply",
    ),
    Case("json", "endless device", "show /dev/zero", None, 2, r"/dev/zero is not a regular file \(a FIFO or device\)"),
    Case(
        "json",
        "FIFO without a writer",
        "show {tmp}/pipe.json",
        None,
        2,
        r"pipe\.json is not a regular file",
        setup=fifo("pipe.json"),
    ),
    Case(
        "json",
        "file over 512 MiB",
        "show {tmp}/big.json",
        None,
        2,
        r"big\.json is larger than 512 MiB",
        setup=sparse("big.json", 512 * 2**20 + 1),
    ),
    Case(
        "json",
        "lone surrogate in a name",
        SHOW,
        put("fusions.0.name", "nv\ud800"),
        0,
        None,
        check=lambda run: "nv\\ud800" in run.stdout,
    ),
    Case(
        "json",
        "UTF-8 byte order mark",
        SHOW,
        whole(b"\xef\xbb\xbf" + RECORDED.read_bytes()),
        2,
        r"not JSON: Unexpected UTF-8 BOM",
    ),
    Case("json", "truncated", SHOW, whole(RECORDED.read_text()[:5000]), 2, r"not JSON: .* at line \d+"),
    # -- values: what no recording can hold ---------------------------------------------------------
    Case(
        "values",
        "negative sample",
        SHOW,
        put("fusions.0.timing.samples_ns.3", -1.0),
        2,
        r"cap\.json\.fusions\[0\]\.timing\.samples_ns\[3\]: -1\.0 is not a duration$",
    ),
    Case(
        "values",
        "null sample",
        SHOW,
        put("fusions.0.timing.samples_ns.0", None),
        2,
        r"fusions\[0\]\.timing\.samples_ns\[0\]: null is not a duration",
    ),
    Case(
        "values",
        "negative kernel sample",
        SHOW,
        put("fusions.0.kernels.1.timing.samples_ns.7", -5),
        2,
        r"fusions\[0\]\.kernels\[1\]\.timing\.samples_ns\[7\]: -5\.0 is not a duration",
    ),
    Case(
        "values",
        "negative sample in diff B",
        DIFF,
        put("fusions.0.timing.samples_ns.0", -2e4),
        2,
        r"^fusiondiff diff: error: .*samples_ns\[0\]: -20000\.0 is not a duration",
    ),
    Case(
        "values",
        "negative shape",
        SHOW,
        put("fusions.0.inputs.0.shape.0", -4),
        2,
        r"fusions\[0\]\.inputs\[0\]\.shape\[0\]: -4 is negative",
    ),
    Case(
        "values",
        "negative stride",
        SHOW,
        put("fusions.0.inputs.2.stride.1", -1),
        2,
        r"inputs\[2\]\.stride\[1\]: -1 is negative",
    ),
    Case(
        "values",
        "negative storage offset",
        SHOW,
        put("fusions.0.inputs.1.storage_offset", -8),
        2,
        r"inputs\[1\]\.storage_offset: -8 is negative",
    ),
    Case(
        "values",
        "negative alignment",
        SHOW,
        put("fusions.0.inputs.1.alignment_bytes", -16),
        2,
        r"alignment_bytes: -16 is negative",
    ),
    Case(
        "values",
        "shape and stride of different rank",
        SHOW,
        put("fusions.0.inputs.0.stride", [1]),
        2,
        r"inputs\[0\]: shape has 2 dimensions but stride 1",
    ),
    Case(
        "values",
        "min above max",
        SHOW,
        both(put("fusions.0.inputs.0.min_value", 9.0), put("fusions.0.inputs.0.max_value", 1.0)),
        2,
        r"min_value 9\.0 is above max_value 1\.0",
    ),
    Case(
        "values", "zero call count", SHOW, put("fusions.0.call_count", 0), 2, r"call_count: 0 is not a positive count"
    ),
    Case(
        "values",
        "negative call count",
        SHOW,
        put("fusions.0.call_count", -3),
        2,
        r"call_count: -3 is not a positive count",
    ),
    Case(
        "values", "negative device index", SHOW, put("fusions.0.device_index", -1), 2, r"device_index: -1 is negative"
    ),
    Case(
        "values",
        "negative grid",
        SHOW,
        put("fusions.0.kernels.1.launch.grid.1", -396),
        2,
        r"launch\.grid\[1\]: -396 is negative",
    ),
    Case("values", "negative warm-up", SHOW, put("protocol.warmup", -5), 2, r"protocol\.warmup: -5 is negative"),
    Case(
        "values",
        "negative SM clock",
        SHOW,
        put("fusions.0.sm_clock_mhz.1", -1980),
        2,
        r"sm_clock_mhz\[1\]: -1980 is negative",
    ),
    Case(
        "values",
        "communication samples beyond its calls",
        SHOW,
        put("communication", [COMMUNICATION | {"calls": 1}]),
        2,
        r"cap\.json\.communication\[0\]: 2 samples for 1 call\(s\): calls counts every sample$",
    ),
    Case(
        "values",
        "negative communication sample",
        SHOW,
        put("communication", [COMMUNICATION | {"samples_ns": [1000.0, -1.0]}]),
        2,
        r"cap\.json\.communication\[0\]\.samples_ns\[1\]: -1\.0 is not a duration$",
    ),
    Case(
        "values",
        "boolean schema version",
        SHOW,
        put("schema_version", True),
        2,
        r"schema_version True is not an integer",
    ),
    # -- overwrite: an output that is an input -------------------------------------------------------
    Case(
        "overwrite",
        "repro onto its capture",
        "repro {cap} -o {cap}",
        None,
        2,
        r"cap\.json is the input .*cap\.json: writing it would destroy the input",
    ),
    Case(
        "overwrite",
        "repro onto a symlink to its capture",
        "repro {cap} -o {tmp}/link.json",
        None,
        2,
        r"link\.json is the input",
        setup=link("link.json"),
    ),
    Case(
        "overwrite",
        "repro onto a hard link to its capture",
        "repro {cap} -o {tmp}/hard.json",
        None,
        2,
        r"hard\.json is the input",
        setup=link("hard.json", hard=True),
    ),
    Case(
        "overwrite",
        "repro through a relative path",
        "repro {cap} -o {tmp}/missing/../cap.json",
        None,
        2,
        r"is the input",
    ),
    Case("overwrite", "diff --json onto A", DIFF + " --json {other}", None, 2, r"other\.json is the input"),
    Case(
        "overwrite",
        "diff --json onto B by a link",
        DIFF + " --json {tmp}/link.json",
        None,
        2,
        r"link\.json is the input .*cap\.json",
        setup=link("link.json"),
    ),
    Case(
        "overwrite",
        "capture onto its script",
        "capture {tmp}/s.py -o {tmp}/s.py",
        None,
        2,
        r"^fusiondiff capture: error: .*s\.py is the input",
        setup=script("s.py"),
    ),
    Case(
        "overwrite",
        "replay onto its script",
        "replay {tmp}/s.py -o {tmp}/s.py",
        None,
        2,
        r"^fusiondiff replay: error: .*s\.py is the input",
        setup=script("s.py"),
    ),
    Case(
        "overwrite",
        "replay onto its --inputs",
        "replay {tmp}/s.py --inputs {cap} -o {cap}",
        None,
        2,
        r"cap\.json is the input",
        setup=script("s.py"),
    ),
    # -- terminal: names from a capture reach the terminal escaped -----------------------------------
    Case(
        "terminal",
        "escape sequence in a fusion name",
        SHOW,
        put("fusions.0.name", "nv\x1b[2J\x1b]0;owned\x07"),
        0,
        None,
        check=shows("nv\\x1b[2J\\x1b]0;owned\\x07"),
    ),
    Case(
        "terminal",
        "NUL and CR in a warning",
        SHOW,
        put("fusions.0.warnings", ["a\x00b\rc"]),
        0,
        None,
        check=shows("warning: a\\x00b\\rc"),
    ),
    Case(
        "terminal",
        "line break in the source",
        SHOW,
        put("source", "train.py\nverdict: comparable"),
        0,
        None,
        check=shows("train.py\\nverdict: comparable"),
    ),
    Case(
        "terminal",
        "bidi override in a kernel name",
        SHOW,
        put("fusions.0.kernels.1.normalized_name", "k\u202eevil"),
        0,
        None,
        check=shows("k\\u202eevil"),
    ),
    Case(
        "terminal",
        "escape sequence in both sides of a diff",
        "diff {cap} {cap}",
        put("fusions.0.name", "nv\x1b[31m"),
        0,
        None,
        check=shows("nv\\x1b[31m"),
    ),
    Case(
        "terminal",
        "escape sequence in --fusion's error",
        "repro {cap} -o {tmp}/r.py --fusion nope",
        put("fusions.0.name", "nv\x1b[2J"),
        2,
        r"available: nv\\x1b\[2J \(backward/nv\\x1b\[2J/",
    ),
    Case(
        "terminal",
        "escape sequence in a definition error",
        REPRO,
        both(put("fusions.0.name", "\x1b[2J"), definition("import os\n" + D)),
        2,
        r"the definition of backward/\\x1b\[2J/\w+: line 1",
    ),
    Case(
        "terminal",
        "escape sequence in a repro name",
        REPRO,
        put("fusions.0.name", "nv\x1b[2J\x00"),
        0,
        r"^wrote",
        check=script_safe("r.py"),
    ),
    Case(
        "terminal",
        "escape sequence in a file name",
        "repro {cap} -o {tmp}/out --fusion #1",
        twin(put("name", "\x1b[2J")),
        0,
        r"^wrote .*/out/backward___2J\.py$",
        setup=directory("out"),
    ),
    # -- handled: failures handled before issue #12, kept so ------------------------------------------
    Case("handled", "missing file", "show {tmp}/nope.json", None, 2, r"nope\.json: no such file"),
    Case("handled", "a directory", "show {tmp}", None, 2, r"is a directory; give the capture's \.json file"),
    Case(
        "handled",
        "unreadable file",
        SHOW,
        None,
        2,
        r"cannot read .*cap\.json: Permission denied",
        setup=unreadable,
        needs_non_root=True,
    ),
    Case("handled", "not JSON", SHOW, whole("{not json"), 2, r"not a fusiondiff capture \(not JSON: .* at line 1\)"),
    Case("handled", "not text", SHOW, whole(b"\xff\xfe\x00\x01"), 2, r"not a fusiondiff capture \(not text\)"),
    Case("handled", "empty file", SHOW, whole(""), 2, r"not JSON"),
    Case(
        "handled",
        "foreign JSON",
        SHOW,
        whole('{"traceEvents": []}'),
        2,
        r"not a fusiondiff capture \(no schema_version\)",
    ),
    Case("handled", "a list", SHOW, whole("[1, 2, 3]"), 2, r"no schema_version"),
    Case(
        "handled",
        "newer schema",
        SHOW,
        put("schema_version", 99),
        2,
        r"written with capture schema 99; .* upgrade fusiondiff",
    ),
    Case(
        "handled",
        "schema version as text",
        SHOW,
        put("schema_version", "1"),
        2,
        r"schema_version '1' is not an integer",
    ),
    Case("handled", "schema version 0", SHOW, put("schema_version", 0), 2, r"schema_version 0 is not a known version"),
    Case(
        "handled",
        "missing field",
        SHOW,
        drop("fusions.0.timing.samples_ns"),
        2,
        r"fusions\[0\]\.timing: missing field 'samples_ns'",
    ),
    Case(
        "handled",
        "mistyped field",
        SHOW,
        put("fusions.0.call_count", "many"),
        2,
        r"call_count: expected int, found 'many'",
    ),
    Case("handled", "unknown kind", SHOW, put("kind", "guess"), 2, r"kind: 'guess' is not one of \['live', 'replay'\]"),
    Case(
        "handled",
        "no fusions to repro",
        REPRO,
        put("fusions", []),
        2,
        r"holds no fusions: nothing to write a repro for",
    ),
    Case("handled", "no fusions to diff", DIFF, put("fusions", []), 2, r"capture B .* holds no fusions"),
    Case(
        "handled",
        "unknown --fusion",
        "repro {cap} -o {tmp}/r.py --fusion nope",
        None,
        2,
        r"has no fusion 'nope'; available: nvFusion13 \(backward/nvFusion13/\w+, #0\)",
    ),
    Case(
        "handled", "scalar without a value", REPRO, scalar(None), 2, r"input 3 is a scalar whose value was not recorded"
    ),
    Case(
        "handled",
        "untranslatable legacy op",
        REPRO,
        definition(D.replace("fd.ops.mul(", "fd.ops.index_put_accumulate(", 1)),
        2,
        r"could not translate fd\.ops\.index_put_accumulate \(line \d+\) to nvfuser_direct",
    ),
    Case(
        "handled",
        "repro several fusions into a file",
        "repro {cap} -o {other}",
        twin(put("name", "nvFusion14")),
        2,
        r"other\.json is a file but .* has 2 fusions",
    ),
]


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


@pytest.mark.parametrize("case", CASES, ids=[f"{c.group}: {c.name}" for c in CASES])
def test_bad_input(case: Case, tmp_path: Path) -> None:
    if case.needs_non_root and IS_ROOT:
        pytest.skip("permission bits do not stop root")
    cap = _prepare(case, tmp_path)
    before = _snapshot(tmp_path)
    if case.setup:
        case.setup(tmp_path, cap)
    argv = shlex.split(case.command.format(cap=cap, other=tmp_path / "other.json", tmp=tmp_path))
    stdout = open(case.stdout_to, "w") if case.stdout_to else subprocess.PIPE  # noqa: SIM115
    try:
        result = subprocess.run(
            [sys.executable, "-m", "fusiondiff", *argv],
            check=False,
            stdout=stdout,
            stderr=subprocess.PIPE,
            cwd=tmp_path,
            timeout=120,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            preexec_fn=_limit_file_size(case.file_size_limit),
        )
    finally:
        if case.stdout_to:
            stdout.close()  # type: ignore[union-attr]
        cap.chmod(0o644)
    out = result.stdout.decode("utf-8") if result.stdout else ""
    err = result.stderr.decode("utf-8")
    assert "Traceback" not in out + err, err
    assert result.returncode == case.code, err
    lines = err.splitlines()
    if case.stderr is None:
        assert lines == []
    else:
        assert len(lines) == 1 and err.endswith("\n"), err
        assert re.search(case.stderr, lines[0]), lines[0]
        if case.code == 2:
            assert re.match(rf"fusiondiff {argv[0]}: error: ", lines[0]), lines[0]
    assert all(line.isprintable() for line in out.splitlines() + lines)
    assert _snapshot(tmp_path).items() >= before.items(), "a file that existed before the command changed"
    assert not list(tmp_path.rglob("*.tmp")), "a temporary file was left behind"
    if case.check:
        case.check(Run(tmp_path, out, err))


def test_the_battery_covers_every_class_with_60_cases() -> None:
    groups = {c.group for c in CASES}
    assert groups == {"code", "records", "output", "json", "values", "overwrite", "terminal", "handled"}
    assert len(CASES) >= 60
    assert len({(c.group, c.name) for c in CASES}) == len(CASES)
