"""Running one fuzz case: the real command line (:func:`fusiondiff.front.cli.main`) in a child
forked from this process, so each case costs a fork rather than an interpreter start and an import
of the package, under the limits of :mod:`fusiondiff.records.limits`: an address-space limit, a
file-size limit and a CPU-time limit set with ``resource.setrlimit`` in the child, and a wall-clock
limit the parent enforces with SIGKILL.

What comes back is an :class:`Outcome`: the exit code, what went to stdout and stderr, the wall
time, the child's peak resident memory above the parent's at the fork, and every file the command
left in its folder. :func:`problems` lists what a case breaks of the harness's rules.
"""

from __future__ import annotations

import hashlib
import os
import resource
import signal
import stat
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fusiondiff.records import limits

ALLOWED_EXITS = (0, 1, 2, 3)
"""0 same, 1 differs, 2 error, 3 a gate that could not be judged."""
TRACEBACK_EXIT = 99
"""The child's exit when an exception escaped the command line (a traceback on its stderr)."""


@dataclass(frozen=True)
class Outcome:
    """What one command did."""

    code: int
    """Its exit code; -9 when it was killed past the wall-clock limit."""
    stdout_bytes: int
    stderr: str
    seconds: float
    memory_bytes: int
    """Peak resident memory above the forking process's at the fork."""
    cpu_seconds: float
    """User and system CPU time: the work done, whatever else the machine runs."""
    files: dict[str, str]
    """Every regular file and link under the case's folder afterwards: its relative path -> a digest."""


def snapshot(folder: Path) -> dict[str, str]:
    """Each entry under ``folder`` (not following links): a link by its target, a regular file by
    its size and a digest of its content, anything else by its kind."""
    found = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(root) / name
            mode = os.lstat(path).st_mode
            rel = str(path.relative_to(folder))
            if stat.S_ISLNK(mode):
                found[rel] = "link " + os.readlink(path)
            elif stat.S_ISREG(mode):
                size = os.lstat(path).st_size
                digest = hashlib.sha256(path.read_bytes()).hexdigest() if size < 2**24 else ""
                found[rel] = f"file {size} {digest}"
            elif not stat.S_ISDIR(mode):
                found[rel] = "special"
    return found


def _resident_bytes() -> int:
    """This process's resident memory now (Linux /proc), 0 where unknown."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _virtual_bytes() -> int:
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _child(argv: Sequence[str], folder: Path, memory: int, output: int) -> None:
    """In the forked child: the streams to files, the limits, the command; never returns."""
    code = TRACEBACK_EXIT
    try:
        os.chdir(folder)
        out = os.open(folder / ".stdout", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        err = os.open(folder / ".stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(out, 1)
        os.dup2(err, 2)
        os.close(out)
        os.close(err)
        sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
        signal.signal(signal.SIGINT, signal.default_int_handler)
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_FSIZE, (output, output))
        cpu = limits.FUZZ_CPU_SECONDS
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        from fusiondiff.front.cli import main

        code = main(list(argv))
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - what escaped the command line is what the case reports
        try:
            traceback.print_exc(file=sys.stderr)
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001
            pass
        code = TRACEBACK_EXIT
    os._exit(code)


def run(argv: Sequence[str], folder: Path, input_bytes: int, seconds: float | None = None) -> Outcome:
    """Run ``fusiondiff ARGV`` in ``folder`` in a forked child under the limits stated for an
    input of ``input_bytes``; wait for it at most ``seconds`` (the stated limit by default)."""
    seconds = limits.FUZZ_SECONDS if seconds is None else seconds
    memory_allowed = limits.memory_allowed(input_bytes)
    output_allowed = limits.output_allowed(input_bytes)
    address_space = _virtual_bytes() + memory_allowed + limits.FUZZ_ADDRESS_SLACK
    base = _resident_bytes()
    sys.stdout.flush()
    sys.stderr.flush()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _child(argv, folder, address_space, output_allowed)
    code, usage = _wait(pid, started + seconds)
    took = time.monotonic() - started
    stdout_path, stderr_path = folder / ".stdout", folder / ".stderr"
    stdout_bytes = stdout_path.stat().st_size if stdout_path.exists() else 0
    stderr = stderr_path.read_bytes()[: 1 << 20].decode("utf-8", "backslashreplace") if stderr_path.exists() else ""
    for path in (stdout_path, stderr_path):
        if path.exists():
            path.unlink()
    peak = usage.ru_maxrss * 1024 if usage is not None else 0
    cpu = usage.ru_utime + usage.ru_stime if usage is not None else 0.0
    return Outcome(code, stdout_bytes, stderr, took, max(0, peak - base), cpu, snapshot(folder))


def _wait(pid: int, deadline: float) -> tuple[int, resource.struct_rusage | None]:
    """The child's exit code and resource use; SIGKILL once ``deadline`` passes (code -9)."""
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), usage
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            _, status, usage = os.wait4(pid, 0)
            return -9, usage
        time.sleep(0.002)


def problems(
    outcome: Outcome, before: dict[str, str], input_bytes: int, own: Sequence[str] = (), summary: bool = False
) -> list[str]:
    """What ``outcome`` breaks of the rules every case keeps (empty: nothing). ``before`` is the
    folder's snapshot before the command; ``own`` the paths the command was told to write (they
    may change). ``summary``: the command may exit 2 with no error line when its output says why
    (the round trip's summary: every fusion's verdict, NOT REPLAYED with its reason)."""
    found = []
    if outcome.code == -9:
        found.append(f"ran past the {limits.FUZZ_SECONDS} s wall-clock limit")
    elif outcome.code == -signal.SIGXCPU:
        found.append(f"ran past the {limits.FUZZ_CPU_SECONDS} s CPU limit")
    elif outcome.code not in ALLOWED_EXITS:
        found.append(f"exit code {outcome.code}")
    if "Traceback" in outcome.stderr:
        found.append("a traceback: " + outcome.stderr.strip().splitlines()[-1][:300])
    lines = outcome.stderr.splitlines()
    errors = [line for line in lines if ": error: " in line]
    if outcome.code == 2:
        one_last = len(errors) == 1 and errors[0] == lines[-1]
        if not (one_last or (summary and not errors)):
            found.append(f"not one error line, last: {outcome.stderr[-600:]!r}")
    strays = _strays(lines)
    if strays and "Traceback" not in outcome.stderr:
        found.append(f"a line on stderr not from fusiondiff: {strays[0][:300]!r}")
    if not all(line.isprintable() for line in outcome.stderr.splitlines()):
        found.append("a line on stderr that is not printable")
    allowed_memory = limits.memory_allowed(input_bytes)
    if outcome.memory_bytes > allowed_memory:
        found.append(f"used {outcome.memory_bytes} bytes of memory, {allowed_memory} allowed")
    changed = [p for p, v in before.items() if outcome.files.get(p) != v and not _owned(p, own)]
    if changed:
        found.append(f"changed or removed what it was not told to write: {sorted(changed)[:5]}")
    written = outcome.stdout_bytes + sum(
        int(v.split()[1]) for p, v in outcome.files.items() if p not in before and v.startswith("file ")
    )
    allowed_output = limits.output_allowed(input_bytes)
    if written > allowed_output:
        found.append(f"wrote {written} bytes, {allowed_output} allowed")
    leftovers = [p for p in outcome.files if p not in before and p.endswith(".tmp")]
    if leftovers:
        found.append(f"left temporary files: {leftovers[:3]}")
    return found


def _strays(lines: Sequence[str]) -> list[str]:
    """Lines on stderr that fusiondiff did not write: neither its own (``fusiondiff...``,
    ``wrote ...``) nor a continuation (4 spaces in) of one of those that fitting a note to the
    terminal's width made."""
    strays, ours = [], False
    for line in lines:
        head = line.startswith(("fusiondiff", "wrote ")) or line == "wrote"  # a path too long for its line follows
        ours = head or (ours and line.startswith("    "))
        if not ours:
            strays.append(line)
    return strays


def _owned(path: str, own: Sequence[str]) -> bool:
    return any(path == o or path.startswith(o.rstrip("/") + "/") for o in own)
