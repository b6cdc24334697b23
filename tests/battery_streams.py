"""Issue #24's cases of the battery for streams, signals and the cases once left ambiguous.

``streams``: every command started with its standard output closed (``>&-``) says in one line
that the report had nowhere to go (exit 2), and one that prints nothing there works; a closed
stderr or stdin changes nothing else; Ctrl-C while the console script is still importing the
command line is ``fusiondiff: interrupted`` and exit 130. That Ctrl-C is made to land there every
time: a module the command line imports (``argparse``) is shadowed by one that signals the
process, or raises ``KeyboardInterrupt``, before it loads the real one.

``ambiguous``: what is now decided (README, "Untrusted captures"): a saved-inputs file that is
damaged, of another capture, too small or unnamed is said in one warning and the inputs are
synthesized; ``repro -o x.py`` of several fusions is refused; ``--timeout`` is a positive number
of seconds; an empty path is refused; a device or FIFO is "not a regular file" everywhere; a
fusion recorded without samples (kept untimed) is shown, compared and rendered as such.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Callable
from pathlib import Path

from battery import DIFF, REPRO, SHOW, Case, Run, both, fifo, put, saved_inputs, shows, twin

CLOSED = r"cannot write the report to stdout: standard output is closed$"

_SHADOW = """\
import os, signal, sys
{action}
# then the real module, as if nothing had happened (the Ctrl-C is already pending)
here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
del sys.modules["argparse"]
import argparse as _real
sys.modules["argparse"] = _real
"""


def shadow_argparse(action: str) -> Callable[[Path, Path], None]:
    def setup(tmp: Path, cap: Path) -> None:
        (tmp / "shadow").mkdir()
        (tmp / "shadow" / "argparse.py").write_text(_SHADOW.format(action=action))

    return setup


SIGNAL_ITSELF = "os.kill(os.getpid(), signal.SIGINT)"
RAISE = "raise KeyboardInterrupt"
SHADOW_ENV = {"PYTHONPATH": "{tmp}/shadow"}


KEYED = put("fusions.0.inputs.0.tensor_key", "k0")
"""Input 0 (bf16 4096x4096, 32 MiB) names a saved tensor."""
INPUT0_BYTES = 4096 * 4096 * 2


def synthesized(run: Run) -> None:
    source = (run.tmp / "r.py").read_text()
    assert "exact_storage(_SAVED" not in source and "synthesize_storage(" in source
    assert "# Note: " in source


def loads_exact(run: Run) -> None:
    assert "exact_storage(_SAVED, 'k0', torch.bfloat16" in (run.tmp / "r.py").read_text()


def is_json(where: str | None = None) -> Callable[[Run], None]:
    def check(run: Run) -> None:
        json.loads(run.stdout if where is None else (run.tmp / where).read_text())

    return check


def rank_files(tmp: Path, cap: Path) -> None:
    (tmp / "ranks").mkdir()
    for rank in (0, 1):
        (tmp / "ranks" / f"live.rank{rank}.json").write_bytes(cap.read_bytes())


def untouched(name: str) -> Callable[[Run], None]:
    def check(run: Run) -> None:
        assert not (run.tmp / name).exists()

    return check


STREAMS = [
    Case("streams", "diff >&-", DIFF, None, 2, CLOSED, close=(1,)),
    Case("streams", "show >&-", SHOW, None, 2, CLOSED, close=(1,)),
    Case("streams", "report >&-", "report {other} {cap} --format md", None, 2, CLOSED, close=(1,)),
    Case("streams", "report of a diff record >&-", "report {other} {cap} --format json", None, 2, CLOSED, close=(1,)),
    Case(
        "streams",
        "ranks >&-",
        "ranks {tmp}/ranks",
        None,
        2,
        CLOSED,
        setup=rank_files,
        close=(1,),
    ),
    Case("streams", "timers >&-", "timers {other} {cap}", None, 2, CLOSED, close=(1,)),
    Case(
        "streams",
        "diff --json >&- still writes the record",
        DIFF + " --json {tmp}/d.json",
        None,
        2,
        CLOSED,
        close=(1,),
        check=is_json("d.json"),
    ),
    Case("streams", "repro >&- prints nothing there", REPRO, None, 0, r"^wrote .*r\.py$", close=(1,)),
    Case(
        "streams",
        "report -o >&- prints nothing there",
        "report {other} {cap} -o {tmp}/r.md",
        None,
        0,
        r"^wrote",
        close=(1,),
    ),
    Case("streams", "an error with stderr closed", "show {tmp}/nope.json", None, 2, None, close=(2,)),
    Case("streams", "diff with stdin closed", DIFF, None, 0, None, close=(0,), check=shows("kernel: ")),
    Case(
        "streams",
        "Ctrl-C while the console script imports the command line",
        SHOW,
        None,
        130,
        r"^fusiondiff: interrupted$",
        setup=shadow_argparse(SIGNAL_ITSELF),
        console=True,
        env=SHADOW_ENV,
    ),
    Case(
        "streams",
        "KeyboardInterrupt while the console script imports the command line",
        SHOW,
        None,
        130,
        r"^fusiondiff: interrupted$",
        setup=shadow_argparse(RAISE),
        console=True,
        env=SHADOW_ENV,
    ),
    Case(
        "streams",
        "Ctrl-C while python -m fusiondiff imports the command line",
        SHOW,
        None,
        130,
        r"^fusiondiff: interrupted$",
        setup=shadow_argparse(SIGNAL_ITSELF),
        env=SHADOW_ENV,
    ),
]

AMBIGUOUS = [
    Case(
        "ambiguous",
        "a damaged saved-inputs file at repro time",
        REPRO,
        KEYED,
        0,
        r"^fusiondiff repro: warning: cap\.tensors\.safetensors is not a safetensors file \(its header is not JSON\): "
        r"the inputs are synthesized$",
        setup=saved_inputs(raw=struct.pack("<Q", 5) + b"{oops"),
        progress="wrote ",
        check=synthesized,
    ),
    Case(
        "ambiguous",
        "a saved-inputs file of another capture",
        REPRO,
        KEYED,
        0,
        r"warning: backward/nvFusion13/\w+ input 0: cap\.tensors\.safetensors has no tensor 'k0': it is synthesized$",
        setup=saved_inputs({"other": 16}),
        progress="wrote ",
        check=synthesized,
    ),
    Case(
        "ambiguous",
        "a saved tensor smaller than its view",
        REPRO,
        KEYED,
        0,
        rf"input 0: the saved tensor 'k0' holds 4096 bytes, its view reaches {INPUT0_BYTES}: it is synthesized$",
        setup=saved_inputs({"k0": 4096}),
        progress="wrote ",
        check=synthesized,
    ),
    Case(
        "ambiguous",
        "a saved-inputs file no input names",
        REPRO,
        None,
        0,
        r"warning: cap\.tensors\.safetensors is beside the capture, but no input of the fusions written names a "
        r"tensor saved in it: the inputs are synthesized$",
        setup=saved_inputs({"k0": INPUT0_BYTES}),
        progress="wrote ",
        check=synthesized,
    ),
    Case(
        "ambiguous",
        "a saved-inputs file that fits is loaded",
        REPRO,
        KEYED,
        0,
        r"^wrote .*r\.py$",
        setup=saved_inputs({"k0": INPUT0_BYTES}),
        check=loads_exact,
    ),
    Case(
        "ambiguous",
        "repro -o x.py of several fusions",
        "repro {cap} -o {tmp}/x.py --every-record",  # the twins are one distinct fusion: one script by default
        twin(put("name", "nvFusion14")),
        2,
        r"x\.py names a script but .*cap\.json has 2 fusions: give a directory \(one script per record\), or pick one",
        check=untouched("x.py"),
    ),
    Case(
        "ambiguous",
        "replay --timeout -5",
        "replay {tmp}/s.py -o {tmp}/o.json --timeout -5",
        None,
        2,
        r"argument --timeout: -5 is out of range: at least 0\.001 and below inf \(see `fusiondiff replay --help`\)$",
    ),
    Case(
        "ambiguous",
        "replay --timeout nan",
        "replay {tmp}/s.py -o {tmp}/o.json --timeout nan",
        None,
        2,
        r"argument --timeout: nan is out of range",
    ),
    Case(
        "ambiguous",
        "roundtrip --timeout 0",
        "roundtrip {cap} -o {tmp}/rt --timeout 0",
        None,
        2,
        r"argument --timeout: 0 is out of range",
        check=untouched("rt"),
    ),
    Case(
        "ambiguous",
        "repro -o ''",
        "repro {cap} -o ''",
        None,
        2,
        r"-o/--output: an empty path names no file; give one$",
        check=untouched("backward_nvFusion13.py"),
    ),
    Case("ambiguous", "diff --json ''", DIFF + " --json ''", None, 2, r"--json: an empty path names no file"),
    Case(
        "ambiguous", "report -o ''", "report {other} {cap} -o ''", None, 2, r"-o/--output: an empty path names no file"
    ),
    Case(
        "ambiguous",
        "roundtrip -o ''",
        "roundtrip {cap} -o ''",
        None,
        2,
        r"-o/--output: an empty path names no file",
        check=untouched("scripts"),
    ),
    Case(
        "ambiguous",
        "replay /dev/zero",
        "replay /dev/zero -o {tmp}/o.json",
        None,
        2,
        r"/dev/zero is not a regular file \(a FIFO or device\); give the repro script",
    ),
    Case(
        "ambiguous",
        "replay a FIFO",
        "replay {tmp}/s.py -o {tmp}/o.json",
        None,
        2,
        r"s\.py is not a regular file \(a FIFO or device\)",
        setup=fifo("s.py"),
    ),
    Case(
        "ambiguous",
        "capture /dev/zero",
        "capture /dev/zero -o {tmp}/o.json",
        None,
        2,
        r"/dev/zero is not a regular file \(a FIFO or device\); give the script",
    ),
    Case(
        "ambiguous",
        "report a FIFO as a diff record",
        "report {tmp}/d.json",
        None,
        2,
        r"d\.json is not a regular file \(a FIFO or device\); give the diff record's \.json file",
        setup=fifo("d.json"),
    ),
    Case(
        "ambiguous",
        "empty sample lists: show",
        SHOW,
        put("fusions.0.timing.samples_ns", []),
        0,
        None,
        check=shows("- median over 0 samples"),
    ),
    Case(
        "ambiguous",
        "empty sample lists: diff",
        DIFF,
        put("fusions.0.timing.samples_ns", []),
        3,  # nothing measured on a side: the kernel question could not be judged
        None,
        check=shows("0 sample(s) in B"),
    ),
    Case(
        "ambiguous",
        "empty sample lists: the Perfetto trace",
        "report {other} {cap} --format perfetto",
        both(put("fusions.0.kernels.0.timing.samples_ns", []), put("fusions.0.kernels.1.timing.samples_ns", [])),
        0,
        None,
        check=is_json(),
    ),
    Case(
        "ambiguous",
        "empty sample lists: timers disagree",
        "timers {other} {cap}",
        both(put("fusions.0.timing.samples_ns", []), put("fusions.0.kernels.1.timing.samples_ns", [])),
        1,
        None,
        check=shows("the timers disagree"),
    ),
]

STREAM_CASES = [*STREAMS, *AMBIGUOUS]
assert os.sep == "/"  # the cases spell paths the POSIX way
