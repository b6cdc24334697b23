"""A stop request (SIGTERM, Ctrl-C) seen at once, even while the main thread waits inside C++.

Python runs a signal handler only when the main thread executes bytecode. During a training step's
backward the main thread waits in the autograd engine while the engine's own thread runs the
fusions, and under capture times each new one: seen on the H200, a SIGTERM took effect only when
the backward had ended, minutes later. Python's C-level handler still writes the signal number to
the wakeup file descriptor at once; a watcher thread reading it sets :data:`requested`, the
recorder stops recording and timing, the backward runs on at its own speed, and the handler then
stops the command in the main thread as before.
"""

from __future__ import annotations

import signal
import socket
import threading

requested = threading.Event()
"""Set as soon as SIGTERM or SIGINT reached the process (once :func:`watch` is installed)."""

_STOP_SIGNALS = frozenset({signal.SIGTERM, signal.SIGINT})
_watcher: threading.Thread | None = None


def watch() -> bool:
    """Start the watcher (once per process; only the main thread may set the wakeup descriptor).
    Returns whether it runs. Signals still go to their Python handlers as before."""
    global _watcher
    if _watcher is not None:
        return True
    if threading.current_thread() is not threading.main_thread():
        return False
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    try:
        signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    except (ValueError, OSError):
        reader.close()
        writer.close()
        return False
    _watcher = threading.Thread(target=_wait_for_stop, args=(reader, writer), name="fusiondiff-stop", daemon=True)
    _watcher.start()
    return True


def _wait_for_stop(reader: socket.socket, writer: socket.socket) -> None:
    # writer is held here so the descriptor Python writes to stays open as long as we read it
    while True:
        try:
            data = reader.recv(64)
        except OSError:
            return
        if not data:
            return
        if any(number in _STOP_SIGNALS for number in data):
            requested.set()
