"""Issue #24's cases of the battery for written scripts and the round trip's output folder.

``pyread``: a script is judged by what Python reads from its bytes (the codec its first two lines
declare, then the tree of the bytes), not by the text fusiondiff meant: a PEP 263 declaration in
a fusion name, a trace or the capture's file name, with ``\\x0a`` (or ``+AAo-`` in UTF-7) in a
later header value or inside a string argument of the definition, once became a statement.

``folder``: ``roundtrip -o DIR`` never writes through a link out of DIR, refuses inputs inside
the places it writes, never takes a stale file in ``DIR/logs`` for this run's replay, and resumes
only from replays tied to this run's plan. Cases that run a replay give it ``--timeout 0.05``, so
it fails at once on any machine (``NOT REPLAYED``, exit 2) and only what the round trip trusts is
left to see.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from battery import RECORDED_DATA, REPRO, Case, Run, body, both, definition, put, script_safe, shows

CODEC = "fusion0 coding:unicode_escape"
"""A fusion name that declares a codec where the old header put it: line 1."""
ESCAPED = "2026 \\x0aPWNED()\\x0a#"
"""A header value that ``unicode_escape`` decodes into a statement line."""
STEM = "0000_backward_nvFusion13"
"""The round trip's stem of the recorded fusion."""
ROUNDTRIP = "roundtrip {cap} -o {tmp}/rt --timeout 0.05"
PROGRESS = "fusiondiff roundtrip: "
LINK_ERR = r"is a symbolic link .*: the round trip writes only regular files and folders under DIR"


def codec(*mutations: Callable[[object], object], name: str = CODEC) -> Callable[[object], object]:
    return both(put("fusions.0.name", name), *mutations)


def copy_to(name: str) -> Callable[[Path, Path], None]:
    return lambda tmp, cap: shutil.copy(cap, tmp / name)


def place(where: str, what: str, source: str = "other.json") -> Callable[[Path, Path], None]:
    """Put at ``tmp/where`` a ``link`` (symbolic, to ``tmp/source``), a ``hard`` link, a ``copy``,
    a ``replay`` (the recording as a replay capture of the round trip's first stem, untied), a
    ``folder`` link or a ``fifo``."""

    def setup(tmp: Path, cap: Path) -> None:
        path = tmp / where
        path.parent.mkdir(parents=True, exist_ok=True)
        target = tmp / source if source != "cap" else cap
        if what == "link":
            path.symlink_to(target)
        elif what == "hard":
            os.link(target, path)
        elif what == "copy":
            shutil.copy(target, path)
        elif what == "replay":
            data = json.loads(json.dumps(RECORDED_DATA))
            data["kind"] = "replay"
            data["fusions"][0]["name"] = f"{STEM}:fusion0"
            path.write_text(json.dumps(data))
        elif what == "folder":
            (tmp / "elsewhere").mkdir()
            path.symlink_to(tmp / "elsewhere", target_is_directory=True)
        elif what == "fifo":
            os.mkfifo(path)

    return setup


def setups(*steps: Callable[[Path, Path], None]) -> Callable[[Path, Path], None]:
    def setup(tmp: Path, cap: Path) -> None:
        for step in steps:
            step(tmp, cap)

    return setup


def still_a_capture(where: str) -> Callable[[Run], None]:
    """The input placed at ``where`` is still the capture it was (not overwritten by a script)."""

    def check(run: Run) -> None:
        assert json.loads((run.tmp / where).read_text())["fusions"]

    return check


KEPT_REPLAY = place(f"rt/replays/{STEM}.json", "copy", "cap")
"""What the old round trip took for a kept replay (any capture there), so it went on to write
``replay.json`` and ``diff.json``."""


def scripts_safe(folder: str) -> Callable[[Run], None]:
    """Every script the round trip wrote is safe as Python reads it (see ``script_safe``)."""

    def check(run: Run) -> None:
        scripts = sorted((run.tmp / folder).glob("*.py"))
        assert scripts
        for path in scripts:
            script_safe(str(path.relative_to(run.tmp)))(run)

    return check


def nothing_in(folder: str) -> Callable[[Run], None]:
    def check(run: Run) -> None:
        assert not (run.tmp / folder).exists() or not any((run.tmp / folder).iterdir())

    return check


def all_of(*checks: Callable[[Run], None]) -> Callable[[Run], None]:
    def check(run: Run) -> None:
        for c in checks:
            c(run)

    return check


def kept_none(run: Run) -> None:
    """The summary counts no replay as made or kept: nothing stale or untied was trusted."""
    assert "replayed now 0, kept from an earlier run 0, without a replay 1" in run.stdout
    assert "NOT REPLAYED" in run.stdout


STRING_ARGUMENT = 'tv99 = fd.ops.neg(tv0, "\\x22)\\x0a    PWNED()\\x0a    #")'
"""Passes the definition check (a call of fd.ops on a string literal); ``unicode_escape``
decodes ``\\x22)\\x0a`` into the end of the call and a statement of the fusion function."""

PYREAD = [
    Case(
        "pyread",
        "codec in the fusion name, \\x0a in recorded_at",
        REPRO,
        codec(put("environment.recorded_at", ESCAPED)),
        0,
        r"^wrote .*r\.py$",
        check=script_safe("r.py"),
    ),
    Case(
        "pyread",
        "codec in the fusion name, line breaks in recorded_at",
        REPRO,
        codec(put("environment.recorded_at", "2026 \nPWNED()\n#")),
        0,
        r"^wrote",
        check=script_safe("r.py"),
    ),
    Case(
        "pyread",
        "codec in the capture's file name (line 2)",
        "repro {tmp}/x_coding:unicode_escape,.json -o {tmp}/r.py",
        put("environment.recorded_at", ESCAPED),
        0,
        r"^wrote",
        setup=copy_to("x_coding:unicode_escape,.json"),
        check=script_safe("r.py"),
    ),
    Case(
        "pyread",
        "codec in the fusion name, \\x22)\\x0a in a string argument",
        REPRO,
        codec(definition(body(STRING_ARGUMENT))),
        0,
        r"^wrote",
        check=script_safe("r.py"),
    ),
    Case(
        "pyread",
        "codec in the trace, \\x0a in the GPU name",
        REPRO,
        both(put("fusions.0.trace", "backward coding=unicode_escape"), put("environment.gpu_name", ESCAPED)),
        0,
        r"^wrote",
        check=script_safe("r.py"),
    ),
    Case(
        "pyread",
        "UTF-7 codec in the fusion name, +AAo- in the driver version",
        REPRO,
        codec(put("environment.driver_version", "580 +AAo-PWNED()+AAo-#"), name="fusion0 coding:utf_7"),
        0,
        r"^wrote",
        check=script_safe("r.py"),
    ),
    Case(
        "pyread",
        "codec in the fusion name, \\x0a in an NVFUSER_ value",
        REPRO,
        codec(put("environment.nvfuser_env", {"NVFUSER_DUMP": "x\\x27)\\x0aPWNED()\\x0a#"})),
        0,
        r"^wrote",
        check=script_safe("r.py"),
    ),
    Case(
        "pyread",
        "form feed, line separator and NUL in the name",
        REPRO,
        codec(put("environment.recorded_at", ESCAPED), name="nv\x0cfusion\u2028coding:unicode_escape\x00"),
        0,
        r"^wrote",
        check=script_safe("r.py"),
    ),
    Case(
        "pyread",
        "the round trip writes the same header",
        ROUNDTRIP,
        codec(put("environment.recorded_at", ESCAPED)),
        2,
        None,
        progress=PROGRESS,
        check=scripts_safe("rt/scripts"),
    ),
    Case(
        "pyread",
        "the round trip: string argument and file name",
        "roundtrip {tmp}/x_coding:unicode_escape,.json -o {tmp}/rt --timeout 0.05",
        both(definition(body(STRING_ARGUMENT)), put("environment.recorded_at", ESCAPED)),
        2,
        None,
        setup=copy_to("x_coding:unicode_escape,.json"),
        progress=PROGRESS,
        check=scripts_safe("rt/scripts"),
    ),
]

FOLDER = [
    Case(
        "folder",
        "a script's path links outside DIR",
        ROUNDTRIP,
        None,
        2,
        rf"rt/scripts/{STEM}\.py {LINK_ERR}",
        setup=place(f"rt/scripts/{STEM}.py", "link"),
    ),
    Case(
        "folder",
        "DIR/replay.json links outside DIR",
        ROUNDTRIP,
        None,
        2,
        rf"rt/replay\.json {LINK_ERR}",
        setup=setups(place("rt/replay.json", "link"), KEPT_REPLAY),
    ),
    Case(
        "folder",
        "DIR/diff.json links outside DIR",
        ROUNDTRIP,
        None,
        2,
        rf"rt/diff\.json {LINK_ERR}",
        setup=setups(place("rt/diff.json", "link"), KEPT_REPLAY),
    ),
    Case(
        "folder",
        "DIR/replays links to a folder outside DIR",
        ROUNDTRIP,
        None,
        2,
        rf"rt/replays {LINK_ERR}",
        setup=place("rt/replays", "folder"),
        check=nothing_in("elsewhere"),
    ),
    Case(
        "folder",
        "a replay's log links outside DIR",
        ROUNDTRIP,
        None,
        2,
        rf"rt/logs/{STEM}\.log {LINK_ERR}",
        setup=place(f"rt/logs/{STEM}.log", "link"),
    ),
    Case(
        "folder",
        "a FIFO at a script's path",
        ROUNDTRIP,
        None,
        2,
        rf"rt/scripts/{STEM}\.py is not a regular file \(a FIFO, device or folder\)",
        setup=place(f"rt/scripts/{STEM}.py", "fifo"),
    ),
    Case(
        "folder",
        "the live capture is a script's path",
        f"roundtrip {{tmp}}/rt/scripts/{STEM}.py -o {{tmp}}/rt --timeout 0.05",
        None,
        2,
        rf"rt/scripts/{STEM}\.py is inside .*rt/scripts, which the round trip writes: move the input out",
        setup=place(f"rt/scripts/{STEM}.py", "copy", "cap"),
        check=still_a_capture(f"rt/scripts/{STEM}.py"),
    ),
    Case(
        "folder",
        "a hard link of the live capture at a script's path",
        ROUNDTRIP,
        None,
        2,
        rf"rt/scripts/{STEM}\.py is the input .*cap\.json",
        setup=place(f"rt/scripts/{STEM}.py", "hard", "cap"),
    ),
    Case(
        "folder",
        "the live capture is its own replay's path",
        f"roundtrip {{tmp}}/rt/replays/{STEM}.json -o {{tmp}}/rt --timeout 0.05",
        None,
        2,
        r"rt/replays/.*\.json is inside .*rt/replays, which the round trip writes",
        setup=place(f"rt/replays/{STEM}.json", "copy", "cap"),
    ),
    Case(
        "folder",
        "the live capture is DIR/diff.json",
        "roundtrip {tmp}/rt/diff.json -o {tmp}/rt --timeout 0.05",
        None,
        2,
        r"rt/diff\.json is the input .*rt/diff\.json",
        setup=place("rt/diff.json", "copy", "cap"),
    ),
    Case(
        "folder",
        "a copy of the live capture in DIR/replays is not a replay",
        ROUNDTRIP,
        None,
        2,
        None,
        setup=place(f"rt/replays/{STEM}.json", "copy", "cap"),
        progress=PROGRESS,
        check=kept_none,
    ),
    Case(
        "folder",
        "a replay capture not tied to this plan is not resumed",
        ROUNDTRIP,
        None,
        2,
        None,
        setup=place(f"rt/replays/{STEM}.json", "replay"),
        progress=PROGRESS,
        check=kept_none,
    ),
    Case(
        "folder",
        "a stale DIR/logs capture is not this run's replay",
        ROUNDTRIP,
        None,
        2,
        None,
        setup=place(f"rt/logs/{STEM}.json", "replay"),
        progress=PROGRESS,
        check=all_of(kept_none, shows("the script ran past")),
    ),
]

SCRIPT_CASES = [*PYREAD, *FOLDER]
