"""Replay processes forked from one server that imported torch and nvFuser once (issue #28,
``roundtrip --processes forked``), instead of fresh interpreters that pay the imports each (6 to
8 s on the H200, most of a spare's preparation).

Each forked child is still a process of its own that owes nothing to the replays before it: the
server never makes a CUDA context, never compiles nor runs a fusion (it refuses to serve if its
imports initialized CUDA, which a forked child could not use), and every child is forked from that
same state; the child then runs :func:`fusiondiff.replay.child.main` as a fresh one would. Only
scripts whose ``NVFUSER_*`` settings are the server's may be forked: nvFuser reads them when it is
imported (:func:`can_serve`).

The parent (:class:`ForkServer`) and the server talk over a Unix socket pair. A request carries the
child's parameters and environment, and the two pipe ends that become its stdin and its stdout and
stderr (``SCM_RIGHTS``); the server answers with the child's pid, and later with its exit status,
since the child is the server's, not the parent's. :class:`ForkedProcess` gives the parent what
:class:`~fusiondiff.replay.child_process.ChildReplay` uses of a ``subprocess.Popen``.
"""

from __future__ import annotations

import io
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, NoReturn

from fusiondiff.records.errors import ReplayError

MAX_MESSAGE = 1 << 20
"""The largest request or answer (a replay's parameters: its script paths and options)."""
REAP_S = 0.02
"""How often the server looks for children that ended."""
READY_TIMEOUT_S = 300.0
"""How long a request waits for the server's imports."""
SESSION_TIMEOUT_S = 10.0
"""How long the server waits for a forked child to lead its own session before telling its pid
(the parent also signals the child itself, so a child later than that is still stopped)."""


def _send(sock: socket.socket, message: dict[str, Any], fds: list[int] | None = None) -> None:
    data = json.dumps(message).encode()
    if fds:
        socket.send_fds(sock, [data], fds)
    else:
        sock.send(data)


# -- the server's side: runs in its own process (python -m fusiondiff.replay.fork_server FD) --------


def serve(sock: socket.socket, profiler_imports: bool = True) -> int:
    """Import torch and nvFuser (and, with ``profiler_imports``, what torch.profiler's first window
    imports), say whether it can serve, then fork a replay child per request until the parent closes
    its end; report each child's pid and, once reaped, its exit status."""
    from fusiondiff.replay import process_setup

    process_setup.import_frontends(profiler=profiler_imports)
    problem = _cuda_initialized()
    # threads the imports started are not in a forked child; said in the log for whoever reads why a
    # child hung (torch 2.14 on CPU starts one, and its forked children ran)
    threads = _os_threads()
    print(
        f"fusiondiff fork server: pid {os.getpid()}, {threads} OS thread(s) after its imports; "
        + (problem or "serving"),
        flush=True,
    )
    try:
        _send(sock, {"ready": problem is None, "error": problem, "pid": os.getpid(), "threads": threads})
    except OSError:
        return 1
    if problem is not None:
        return 1
    children: set[int] = set()
    while True:
        readable, _, _ = select.select([sock], [], [], REAP_S)
        if readable:
            try:
                data, fds, _, _ = socket.recv_fds(sock, MAX_MESSAGE, 2)
            except OSError:
                break
            if not data:  # the parent closed its end: no more replays
                break
            request = json.loads(data)
            led_r, led_w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(led_r)
                _become_child(sock, fds, request, led_w)
            os.close(led_w)
            for fd in fds:
                os.close(fd)
            children.add(pid)
            # the pid is told only once the child leads its own session: a cancel that signals its
            # group at once must find that group (else it signals nothing and waits for the child)
            _await_close(led_r, SESSION_TIMEOUT_S)
            try:
                _send(sock, {"id": request["id"], "pid": pid})
            except OSError:
                break
        try:
            _reap(sock, children)
        except OSError:
            break
    return 0


def _cuda_initialized() -> str | None:
    """Why this process cannot fork replay children: its imports initialized CUDA (a forked child
    could not use it), or None."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        return "importing torch and nvFuser initialized CUDA in the server; forked children could not use it"
    return None


def _os_threads() -> int | None:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return None


def _reap(sock: socket.socket, children: set[int]) -> None:
    for pid in list(children):
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            children.discard(pid)
            continue
        if done:
            children.discard(pid)
            _send(sock, {"exited": pid, "returncode": os.waitstatus_to_exitcode(status)})


def _await_close(fd: int, timeout_s: float) -> None:
    """Wait (at most ``timeout_s``) until the write end of the pipe ``fd`` reads from is closed
    everywhere, then close ``fd``."""
    deadline = time.monotonic() + timeout_s
    try:
        while (left := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select([fd], [], [], left)
            if readable and not os.read(fd, 64):
                return
    except OSError:
        pass
    finally:
        os.close(fd)


def _become_child(sock: socket.socket, fds: list[int], request: dict[str, Any], led: int | None = None) -> NoReturn:
    """In the forked child: its own session (the parent stops its whole group; ``led``, a pipe's
    write end, is closed once it is made, which the server waits for before telling the pid), the
    pipes as its stdin, stdout and stderr, its environment, then the replay; it never returns to the
    server's loop."""
    code = 70
    try:
        sock.close()
        os.setsid()
        if led is not None:
            os.close(led)
        stdin_fd, stdout_fd = fds
        os.dup2(stdin_fd, 0)
        os.dup2(stdout_fd, 1)
        os.dup2(stdout_fd, 2)
        for fd in fds:
            os.close(fd)
        sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)))
        sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), line_buffering=True)
        sys.stderr = io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, "w", closefd=False)), line_buffering=True)
        os.environ.update(request["env"])
        from fusiondiff.replay import child

        code = child.main([request["params"]])
    except BaseException:  # noqa: BLE001 - whatever happens, the child must not return to the loop
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


PROFILER_IMPORTS_FLAG = "--profiler-imports"


def main(argv: list[str] | None = None) -> int:
    args = argv or sys.argv[1:]
    return serve(socket.socket(fileno=int(args[0])), profiler_imports=PROFILER_IMPORTS_FLAG in args[1:])


# -- the parent's side ----------------------------------------------------------------------------


class ForkServer:
    """The server process, started at construction with this process's environment and ``env``
    (the round trip's token: a forked child's ``/proc`` environment is the server's); its output goes
    to ``log_file``. With ``profiler_imports`` (the replays time through torch.profiler) the server
    also imports what the profiler's first window would import in each child.
    :meth:`spawn` forks a replay child; :meth:`close` stops the server (its children, each in its own
    session, are stopped by their owners)."""

    def __init__(
        self, env: Mapping[str, str] | None = None, log_file: Path | None = None, profiler_imports: bool = True
    ) -> None:
        environ = {**os.environ, **(env or {})}
        self.nvfuser_env = {k: v for k, v in environ.items() if k.startswith("NVFUSER_")}
        """The ``NVFUSER_*`` settings nvFuser was imported with in the server (:meth:`can_serve`)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        log: IO[bytes] | int = open(log_file, "ab") if log_file else subprocess.DEVNULL  # noqa: SIM115
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "fusiondiff.replay.fork_server", str(theirs.fileno())]
                + ([PROFILER_IMPORTS_FLAG] if profiler_imports else []),
                pass_fds=(theirs.fileno(),),
                start_new_session=True,
                env=environ,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        finally:
            theirs.close()
            if not isinstance(log, int):
                log.close()
        self._sock = ours
        self._send_lock = threading.Lock()
        self._cond = threading.Condition()
        self._ready: dict[str, Any] | None = None
        self._pids: dict[int, int] = {}
        self._exits: dict[int, int] = {}
        self._gone = False
        self._next_id = 0
        self._reader = threading.Thread(target=self._read, name="fusiondiff-fork-server", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = self._sock.recv(MAX_MESSAGE)
            except OSError:
                data = b""
            with self._cond:
                if not data:
                    self._gone = True
                    self._cond.notify_all()
                    return
                message = json.loads(data)
                if "ready" in message:
                    self._ready = message
                elif "exited" in message:
                    self._exits[message["exited"]] = message["returncode"]
                elif "id" in message:
                    self._pids[message["id"]] = message["pid"]
                self._cond.notify_all()

    def can_serve(self, script_env: Mapping[str, str]) -> bool:
        """Whether scripts that set ``script_env`` (their ``NVFUSER_*`` settings, which a fresh child
        puts in its environment before it imports nvFuser) may be forked from this server."""
        return all(self.nvfuser_env.get(name) == value for name, value in script_env.items())

    def wait_ready(self, timeout_s: float = READY_TIMEOUT_S) -> str | None:
        """None once the server serves; else why it does not (within ``timeout_s``)."""
        with self._cond:
            self._cond.wait_for(lambda: self._ready is not None or self._gone, timeout=timeout_s)
            if self._ready is None:
                return "the fork server ended before it was ready" if self._gone else "the fork server is not ready"
            if not self._ready["ready"]:
                return str(self._ready.get("error") or "the fork server cannot serve")
            return None if not self._gone else "the fork server has ended"

    def spawn(self, params: str, env: Mapping[str, str]) -> ForkedProcess:
        """Fork a replay child that runs ``fusiondiff.replay.child.main([params])`` with ``env`` added
        to its environment; raises :class:`ReplayError` when the server cannot."""
        problem = self.wait_ready()
        if problem is not None:
            raise ReplayError(problem)
        stdin_read, stdin_write = os.pipe()
        stdout_read, stdout_write = os.pipe()
        try:
            with self._send_lock:
                request_id, self._next_id = self._next_id, self._next_id + 1
                _send(self._sock, {"id": request_id, "params": params, "env": dict(env)}, [stdin_read, stdout_write])
        except OSError as exc:
            for fd in (stdin_write, stdout_read):
                os.close(fd)
            raise ReplayError(f"the fork server did not take the replay: {exc}") from None
        finally:
            os.close(stdin_read)
            os.close(stdout_write)
        with self._cond:
            self._cond.wait_for(lambda: request_id in self._pids or self._gone, timeout=30)
            pid = self._pids.pop(request_id, None)
        if pid is None:
            os.close(stdin_write)
            os.close(stdout_read)
            raise ReplayError("the fork server did not start the replay")
        return ForkedProcess(self, pid, os.fdopen(stdin_write, "wb"), os.fdopen(stdout_read, "rb"))

    def _returncode(self, pid: int, timeout_s: float | None) -> int | None:
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with self._cond:
            while pid not in self._exits:
                if self._gone and not _alive(pid):
                    # the server ended first: the child was reparented and its status lost
                    self._exits[pid] = -int(signal.SIGKILL)
                    break
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return None
                self._cond.wait(timeout=0.05 if self._gone or left is None else min(left, 0.05))
            return self._exits[pid]

    def close(self) -> None:
        """Stop the server: its end of the socket closed, it leaves its loop; killed after 10 s."""
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie, ended but not yet reaped by whoever adopted it, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


class ForkedProcess:
    """A replay child forked by a :class:`ForkServer`, seen as a ``subprocess.Popen``: ``pid``,
    ``stdin``, ``stdout``, ``returncode``, :meth:`poll` and :meth:`wait`."""

    def __init__(self, server: ForkServer, pid: int, stdin: IO[bytes], stdout: IO[bytes]) -> None:
        self._server = server
        self.pid, self.stdin, self.stdout = pid, stdin, stdout
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._server._returncode(self.pid, timeout_s=0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self._server._returncode(self.pid, timeout)
            if self.returncode is None:
                raise subprocess.TimeoutExpired([f"forked replay {self.pid}"], timeout or 0)
        return self.returncode


if __name__ == "__main__":
    raise SystemExit(main())
