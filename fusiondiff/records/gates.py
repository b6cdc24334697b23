"""The questions a diff answers, a gated question's outcome and the exit code a command gives for
several of them.

Every command that diffs (``diff``, ``report --exit-code``, ``ranks``, ``roundtrip``) answers
questions (kernel time, host time per call, repro fidelity), each gated or not. A gated question
passes, fails, or could not be judged: nothing was measured on a side (every sample 0 ns, host
time never recorded). Not measured is never a pass: it has an exit code of its own, below a
failure (a failure says more) and above a pass.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Literal

Question = Literal["kernel", "host", "fidelity"]
"""The three questions a diff answers, in the order every output gives them; a record naming
another is refused when read (nothing would show its finding)."""

KERNEL: Final = "kernel"
"""Does the same fusion's kernel time differ, and why: always gated (``exit_code``)."""
HOST: Final = "host"
"""Does the host time per call differ, and does a side's host keep its GPU waiting: gated with
``--gate host``."""
FIDELITY: Final = "fidelity"
"""What B runs differently from A: gated with ``--gate fidelity`` or ``--strict``."""
QUESTIONS: Final[tuple[Question, ...]] = (KERNEL, HOST, FIDELITY)
"""The questions in the order every output gives them; the only place their names are written
(everything else compares with these constants)."""
STRICT_GATE: Final = FIDELITY
"""The question ``--strict`` gates."""

Outcome = Literal["passes", "fails", "not measured"]
"""What a gated question says: it passes, fails, or could not be judged."""

EXIT_PASSES = 0
"""Every gated question passes."""
EXIT_FAILS = 1
"""A gated question fails (a difference, a failure, a missing fusion)."""
EXIT_ERROR = 2
"""Bad input, a file that cannot be read or written."""
EXIT_NOT_MEASURED = 3
"""No gated question fails, but one could not be judged: nothing was measured to judge it by."""

_EXITS: dict[Outcome, int] = {"passes": EXIT_PASSES, "fails": EXIT_FAILS, "not measured": EXIT_NOT_MEASURED}


def exit_code_of(outcomes: Iterable[Outcome]) -> int:
    """The exit code for the gated questions' outcomes: 1 if one fails, else 3 if one was not
    measured, else 0 (also for none)."""
    found = set(outcomes)
    for outcome in ("fails", "not measured"):
        if outcome in found:
            return _EXITS[outcome]
    return EXIT_PASSES


def combined_exit_code(codes: Iterable[int]) -> int:
    """One exit code for several diffs' (the ranks of a step, a round trip's parts): an error
    first, then a failure, then not measured, else 0."""
    found = set(codes)
    for code in (EXIT_ERROR, EXIT_FAILS, EXIT_NOT_MEASURED):
        if code in found:
            return code
    return EXIT_PASSES
