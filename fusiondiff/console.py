"""The ``fusiondiff`` console script and ``python -m fusiondiff``: Ctrl-C handled from the first
statement of fusiondiff's own.

Importing the command line (argparse, sockets, the records of each command) takes tens of
milliseconds on a loaded machine, and a Ctrl-C then raised ``KeyboardInterrupt`` where nothing
caught it: a traceback, in 3 of 30 tries within the first 30 ms. So this module, which imports
nothing but the interpreter's built-in ``_signal`` (already loaded when Python starts; :mod:`signal`
itself takes half a millisecond to import), installs a SIGINT handler that only notes the signal as it is imported;
once the command line is imported the usual handling is back, and a Ctrl-C noted before stops the
command as a later one does: ``fusiondiff: interrupted`` and exit 130. What Python does before it
runs the console script (its own start, ``site``) is Python's and cannot be handled here.
"""

# No `from __future__` here: even that is an import. Type checkers read the module signal wraps.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal
else:
    import _signal as signal  # the built-in module signal wraps: nothing to import (see above)

EXIT_INTERRUPTED = 130
"""128 + SIGINT (as :data:`fusiondiff.front.cli.EXIT_INTERRUPTED`)."""

_noted: list[int] = []


def _note(signum: int, frame: object) -> None:
    _noted.append(signum)


# Only where Python's own Ctrl-C handling is in place: a process started with SIGINT ignored (a
# background job) keeps ignoring it.
_early = signal.getsignal(signal.SIGINT) is signal.default_int_handler
if _early:
    signal.signal(signal.SIGINT, _note)


def _interrupted() -> int:
    import sys

    try:
        sys.stderr.write("fusiondiff: interrupted\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass
    return EXIT_INTERRUPTED


def main() -> int:
    """Run the command line (:func:`fusiondiff.front.cli.main`); returns the exit code."""
    try:
        try:
            from fusiondiff.front import cli
        finally:
            if _early:
                signal.signal(signal.SIGINT, signal.default_int_handler)
        if _noted:
            return _interrupted()
        code = cli.main()
    except KeyboardInterrupt:  # between the handlers, before the command line's own try
        code = _interrupted()
    # The command is over and its exit code decided: a Ctrl-C while the interpreter shuts down
    # changes nothing, and would print a traceback from wherever the shutdown is.
    if _early:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    return code
