"""The turn-taking of a replay process started ahead of its turn (no imports: the round trip's
parent reads these names without loading the replay machinery).

A gated child stops at a gate until its parent writes a word on its stdin:

- ``imports``: it reads its scripts, sets their ``NVFUSER_*`` environment and imports torch and
  nvFuser, then waits for ``go`` before anything touches the GPU;
- ``context``: the same, then it waits for ``prepare`` to make its CUDA context and open the
  profiler once (its start-up, in a thread; 0.03 s on the H200 once its imports are done with
  torch's), launching no kernel; then it
  waits for ``go`` to run its scripts (each fusion compiled at its first execute; ``go`` may come
  before the profiler has started, the compile then runs beside it), and then for the profiler and
  for ``sample`` to take its warm-ups and samples (so its compile may run while others prepare, its
  samples not);
- ``gpu``: the same as ``context``, but its scripts run in the preparation too (each fusion compiled
  at its first execute, its inputs copied for timing): ``go`` only takes its warm-ups and samples.

``go`` alone lets a child do both (``go`` then ``sample``, at once, for ``context``).

Both sides are here: the stages' names and the line a child prints at each (:func:`stage_line`),
which the parent reads, and the child's own waiting on stdin (:class:`Gates`).
"""

from __future__ import annotations

import sys

GATE_IMPORTS = "imports"
GATE_CONTEXT = "context"
GATE_GPU = "gpu"
GATES = (GATE_IMPORTS, GATE_CONTEXT, GATE_GPU)
STAGED_GATES = (GATE_CONTEXT, GATE_GPU)
"""The gates whose processes prepare on the GPU when told (``prepare``), between other replays'
samples on that GPU and never during them."""
PREPARE_HANDOVER = "handover"
"""``--prepare-ahead handover``: a process gated at ``context`` that is never let prepare beside
another's turn: its turn (CUDA context, then its scripts and compile) starts as the process before
it reports its samples taken, while that one writes its capture and exits (0.13 to 0.15 s per turn
on the H200, fifth round of #28), and its samples wait for that exit. So no other process holds a
CUDA context while one samples, as with ``imports``."""
PREPARE_CHOICES = (GATE_IMPORTS, PREPARE_HANDOVER, GATE_CONTEXT, GATE_GPU)
"""What ``--prepare-ahead`` takes: the gates, and ``handover``, which is the ``context`` gate taken
in turns (:func:`child_gate`)."""


def child_gate(prepare: str) -> str:
    """The gate a process started ahead waits at for ``--prepare-ahead prepare``."""
    return GATE_CONTEXT if prepare == PREPARE_HANDOVER else prepare


STARTING = "starting"
IMPORTED = "imported"
PREPARING = "preparing"
PREPARED = "prepared"
COMPILING = "compiling"
COMPILED = "compiled"
TIMING = "timing"
TIMED = "timed"
ENDED = "ended"
STAGES = (STARTING, IMPORTED, PREPARING, PREPARED, COMPILING, COMPILED, TIMING, TIMED, ENDED)
"""Where a replay child started ahead is, as its parent sees it: importing; imported and waiting to
prepare; told to prepare on the GPU; prepared and waiting to time; (gated at ``context`` and told
to go with its samples held) running its scripts, then compiled and waiting to sample; told to go
(or to sample); timed (writing its capture); its process gone. A child prints ``imported``,
``prepared``, ``compiled`` and ``timed`` itself."""

DEFAULT_AHEAD = 1
"""Replay processes each worker keeps started beyond the one timing (``--ahead``): one, stopped after
its imports (:data:`DEFAULT_PREPARE`) and forked from the run's server (:data:`DEFAULT_FORKED`), so
nothing but the process timing holds a CUDA context on the GPU. Measured on the H200 in #28
(``benchmarks/RESULTS.md``, fourth round): 2.4 to 4.2 s per distinct fusion, 2.6 to 4.7x less than
the reference, with the reference's verdicts on every record of three sessions. Spares that make
their context ahead were measured before the profiler's imports moved to the server (``context``:
2.7 to 3.3 s), but three idle processes holding contexts on the GPU slowed a fusion by 1.1 to 1.7 %
there, and the context mode turned one borderline verdict in each of the three sessions it was
measured on. What is left of a turn is its context (0.25 s), its compile and its samples.
:data:`PIPELINE_AHEAD`'s reasoning: a process costs
about 8-9 s of mostly one-core work before its samples on the H200 (imports 4.4 s, CUDA context
0.55 s, compile about 1 s, the profiler's first window 1.5-1.9 s); what must wait for the GPU is its
samples, and its preparation on the GPU, which several spares do at once between two replays'
samples. With 4 ahead a worker has, in steady state, a replay prepared by the time the one before it
has timed, and 5 processes per GPU fit in the H200 machine's 16 cores; each spare holds a CUDA
context (about 0.5 GiB) and its fusion's inputs on the GPU while it waits."""
PIPELINE_AHEAD = 4
"""K of the pipeline mode that ``bench_roundtrip.py --modes`` measures (see :data:`DEFAULT_AHEAD`)."""
CONTEXT_AHEAD = 6
"""K of the ``context`` mode that ``bench_roundtrip.py --modes`` measures: a process needs its
imports (6 to 8 s on the H200 machine, more when several import at once) and its context and
profiler (about 2.3 s) before its turn, and a turn (its scripts' compile and its samples) takes 0.3
to 5 s, about 2 s in the median, so about five turns pass while the next spare gets ready; six keep
one ready in steady state, when the replacement of each starts with its turn."""
FORKED_AHEAD = 3
"""K of the ``forked`` mode that ``bench_roundtrip.py --modes`` measures (``--prepare-ahead context
--processes forked``): a forked spare has no imports to do, only its context and profiler (about
2.3 s on the H200, 2.7 to 3.7 s when several start at once) against turns of about 2 s; three keep
one ready, with half the context mode's idle contexts on the GPU. Measured on the H200: 3.2 and 4.3 s
per distinct fusion (llama3, phi-2); on llama3 its spares turned the verdict the context mode
turned."""
DEFAULT_PREPARE = GATE_IMPORTS
"""How far a process started ahead goes by default (``--prepare-ahead``): its imports only; its CUDA
context and compile come in its turn, and its samples start the profiler, as in the reference."""
DEFAULT_FORKED = True
"""Whether processes started ahead are forked from one server per run that imported torch and
nvFuser once (``--processes forked``, the default) rather than started as fresh interpreters
(``fresh``, about 8 s of imports each on the H200, with what torch.profiler imports). A script that
sets ``NVFUSER_*`` variables of its own, or a server that cannot serve, still gets a fresh process."""


def stage_line(nonce: str, stage: str, words: str) -> str:
    """The line a gated child prints when it reaches ``stage``; the parent reads its stages from
    lines that start ``replay child <nonce>: `` (a script cannot print one by chance)."""
    return f"replay child {nonce}: {stage}; {words}"


class Gates:
    """A gated child's side of the turn-taking on stdin: the parent writes ``prepare`` and ``go``
    (``go`` alone lets it do both); a closed stdin means the parent is gone or dropped this replay,
    and the child leaves without running anything more."""

    def __init__(self, gate: str, nonce: str) -> None:
        self.gate, self.nonce = gate, nonce
        self.going = False

    def _read(self) -> str:
        word = sys.stdin.readline().strip()
        if word not in ("prepare", "go", "sample"):
            raise SystemExit(3)
        return word

    def wait_to_prepare(self) -> None:
        words = (
            "prepared (scripts read, torch and nvFuser imported); waiting for its turn"
            if self.gate == GATE_IMPORTS
            else "scripts read, torch and nvFuser imported; waiting for its turn to prepare on the GPU"
        )
        print(stage_line(self.nonce, IMPORTED, words), flush=True)
        self.going = self._read() == "go"

    def prepared(self) -> None:
        """Say that its preparation is done (called from the profiler's thread for ``context``: a
        whole line in one write, so the scripts' output cannot split it)."""
        done = (
            "CUDA context made, profiler started; waiting for its turn to run its scripts and time"
            if self.gate == GATE_CONTEXT
            else "CUDA context made, scripts run and compiled, profiler started; waiting for its turn to time"
        )
        sys.stdout.write(stage_line(self.nonce, PREPARED, done) + "\n")
        sys.stdout.flush()

    def wait_to_time(self) -> None:
        """Wait for ``go`` (unless it came at the first gate)."""
        if not self.going and self._read() != "go":
            raise SystemExit(3)
        self.going = True

    def wait_to_sample(self) -> None:
        """(``context``) After its scripts ran: its samples wait for ``sample``, which its parent
        sends once no other process prepares on this GPU."""
        print(
            stage_line(self.nonce, COMPILED, "scripts run and compiled; waiting for its turn to sample"),
            flush=True,
        )
        if self._read() != "sample":
            raise SystemExit(3)

    def timed(self) -> None:
        print(stage_line(self.nonce, TIMED, "timing done; writing"), flush=True)
