"""How the command line stops on Ctrl-C and SIGTERM: SIGTERM raises :class:`Terminated` where the
program is, so that ``finally`` blocks run (an atomic write removes its temporary file), and
:func:`stop_behind` tells a stop from a fault, also where Python wrapped the stop in another
exception."""

from __future__ import annotations

import signal
import threading
from typing import Literal


class Terminated(BaseException):
    """SIGTERM, raised where the program is so that ``finally`` blocks run before the command
    exits with :data:`fusiondiff.front.cli.EXIT_TERMINATED`."""


def raise_terminated(signum: int, frame: object) -> None:
    """The SIGTERM handler of a command: raise :class:`Terminated`."""
    raise Terminated


def on_sigterm(handler: object) -> object:
    """Install ``handler`` for SIGTERM; returns the one it replaces. Only the main thread may set
    handlers: elsewhere (the command line called from a thread) SIGTERM keeps its handler."""
    if handler is None or threading.current_thread() is not threading.main_thread():
        return None
    try:
        return signal.signal(signal.SIGTERM, handler)  # type: ignore[arg-type]
    except (ValueError, OSError):
        return None


def stop_behind(exc: BaseException) -> Literal["interrupted", "terminated"] | None:
    """``"interrupted"`` (Ctrl-C) or ``"terminated"`` (SIGTERM) where ``exc`` is that stop or was
    raised from one (its ``__cause__``, followed down), else None.

    Python 3.11 raises a ``RuntimeError`` from whatever a ``__set_name__`` raised while a class was
    made, so a Ctrl-C landing while a module makes its classes (``platform``'s, under
    ``build_parser``'s imports) arrives wrapped. An error raised while a stop was being handled
    (its ``__context__``) is a fault of its own and keeps its traceback."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return "interrupted"
        if isinstance(cause, Terminated):
            return "terminated"
        seen.add(id(cause))
        cause = cause.__cause__
    return None
