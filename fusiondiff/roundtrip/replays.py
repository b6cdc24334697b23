"""The real replay of a round trip: each batch of scripts in a fresh child process that sees only
its worker's GPU (:class:`ChildReplays`), started ahead of its turn where it can be; and the shapes
any replay given to :func:`fusiondiff.roundtrip.run.roundtrip` has (tests give recorded ones)."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from fusiondiff.recording.device_watch import TOKEN_ENV
from fusiondiff.records.options import RecordingOptions
from fusiondiff.records.progress import Progress
from fusiondiff.replay.stages import DEFAULT_PREPARE

if TYPE_CHECKING:
    from fusiondiff.replay.fork_server import ForkServer

__all__ = ["TOKEN_ENV"]  # re-exported: the round trip stops its replays by it

FORK_SERVER_LOG = "fork_server.log"
"""The fork server's own output, beside the replays' logs."""

ReplayFunction = Callable[[Sequence[str], Path, "str | None"], None]
"""``replay(scripts, output, device)``: replay ``scripts`` in one fresh process that sees only GPU
``device`` (``None``: whatever is visible) and write one capture to ``output``. Raises
:class:`ReplayError` on failure, after writing what was recorded, as
:func:`fusiondiff.replay.runner.replay_scripts` does."""


class StartedReplay(Protocol):
    """A replay process started ahead of its turn (as :class:`fusiondiff.replay.runner.PendingReplay`)."""

    def run(self, timeout_s: float | None = None) -> Any:
        """Let it run; raises :class:`ReplayError` as a :data:`ReplayFunction` does. With
        ``timeout_s``, it is stopped after that long instead of its own timeout (the rest of a turn
        that began before)."""

    def cancel(self) -> None:
        """Stop it unused."""


class StagedReplay(StartedReplay, Protocol):
    """A replay process started ahead that prepares on the GPU only when told, and times only on
    ``go`` (as :class:`fusiondiff.replay.runner.PendingReplay` gated at ``"context"`` or ``"gpu"``):
    the round trip lets several prepare at once, never while one of them takes its samples."""

    def prepare(self) -> None:
        """Let it prepare on the GPU now (CUDA context, scripts run and compiled, profiler opened
        once); returns at once."""

    def go(self) -> None:
        """Let it take its warm-ups and samples now; returns at once (:meth:`run` waits)."""

    def start_turn(self) -> None:
        """Its turn has come: one gated at ``"context"`` runs its scripts now (its compile), its
        samples held until :meth:`sample`; for any other, nothing yet. Returns at once."""

    def sample(self) -> None:
        """Let it take its warm-ups and samples now (:meth:`go`); returns at once."""

    def stage(self) -> str:
        """Where it is: one of :data:`fusiondiff.replay.stages.STAGES`."""


StartAhead = Callable[[Sequence[str], Path, "str | None"], StartedReplay]
"""``start(scripts, output, device)``: start the replay process of ``scripts`` now, to run in its
turn (:meth:`ChildReplays.start`)."""


class ChildReplays:
    """The real replay (a :data:`ReplayFunction`): :func:`fusiondiff.replay.runner.replay_scripts`
    in a fresh child process that sees only ``device``. :meth:`start` starts such a process ahead
    of its turn, gated at ``gate`` (:mod:`fusiondiff.replay.stages`): with ``"imports"`` it imports
    torch and nvFuser while the replay before it runs, and touches the GPU only when
    :meth:`StartedReplay.run` is called; with ``"gpu"`` (a :class:`StagedReplay`) it also prepares
    on the GPU when told. Every process writes its phases' wall-clock times beside its log."""

    def __init__(
        self,
        options: RecordingOptions | None = None,
        timeout_s: float = 900.0,
        token: str | None = None,
        gate: str = DEFAULT_PREPARE,
        forked: bool = False,
        relay: Progress | None = None,
    ) -> None:
        self.options, self.timeout_s, self.token, self.gate = options, timeout_s, token, gate
        self.forked = forked
        self.relay = relay
        """Where the processes' own progress lines and this class's warnings go (stderr, as they
        are, where None; a Slurm task writes them to its log, as they are)."""
        """Processes started ahead are forked from one server that imported torch and nvFuser once
        (:mod:`fusiondiff.replay.fork_server`), made at the first :meth:`start`."""
        self._server: ForkServer | None = None
        self._server_lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        # sent to a Slurm task without this machine's server: the task's node makes its own
        state = dict(self.__dict__)
        state["_server"], state["_server_lock"], state["relay"] = None, None, None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._server_lock = threading.Lock()

    def _fork_server(self, logs: Path) -> ForkServer | None:
        if not self.forked:
            return None
        from fusiondiff.replay.fork_server import ForkServer
        from fusiondiff.replay.process_setup import needs_profiler_imports

        with self._server_lock:
            if self._server is None and self.forked:
                logs.mkdir(parents=True, exist_ok=True)
                try:
                    server = ForkServer(
                        self._env(None),
                        log_file=logs / FORK_SERVER_LOG,
                        profiler_imports=needs_profiler_imports(self.options),
                    )
                except OSError as exc:
                    problem: str | None = f"it could not start: {exc.strerror or exc}"
                else:
                    problem = server.wait_ready()
                    if problem is None:
                        self._server = server
                    else:
                        server.close()
                if problem is not None:
                    # the replays still run, each in a fresh process: say once why they are not forked
                    self.forked = False
                    self._say(
                        f"fusiondiff roundtrip: warning: no forked replay processes ({problem}); "
                        f"each starts as a fresh one (the server's log: {logs / FORK_SERVER_LOG})"
                    )
            return self._server

    def _say(self, line: str) -> None:
        """One warning line: to :attr:`relay`, else to stderr as it is."""
        if self.relay is not None:
            self.relay(line)
        else:
            print(line, file=sys.stderr, flush=True)

    def close(self) -> None:
        """Stop the fork server, if one was made (the replays it forked are each stopped by their
        owner)."""
        with self._server_lock:
            server, self._server = self._server, None
        if server is not None:
            server.close()

    def _env(self, device: str | None) -> dict[str, str]:
        env = {}
        if device is not None:
            env["CUDA_VISIBLE_DEVICES"] = device
        if self.token is not None:
            env[TOKEN_ENV] = self.token
        return env

    def __call__(self, scripts: Sequence[str], output: Path, device: str | None) -> None:
        from fusiondiff.replay.runner import replay_scripts

        replay_scripts(
            list(scripts),
            output=str(output),
            options=self.options,
            timeout_s=self.timeout_s,
            child_env=self._env(device),
            phases=True,
            relay=self.relay,
        )

    def start(self, scripts: Sequence[str], output: Path, device: str | None) -> StartedReplay:
        from fusiondiff.replay.runner import start_replay

        return start_replay(
            list(scripts),
            output=str(output),
            options=self.options,
            timeout_s=self.timeout_s,
            child_env=self._env(device),
            gate=self.gate,
            phases=True,
            fork_server=self._fork_server(output.parent),
            relay=self.relay,
        )


def replay_in_child(
    options: RecordingOptions | None = None,
    timeout_s: float = 900.0,
    token: str | None = None,
    gate: str = DEFAULT_PREPARE,
    forked: bool = False,
    relay: Progress | None = None,
) -> ReplayFunction:
    """The real replay: :class:`ChildReplays` (its processes' own progress lines to ``relay``). Raises
    :class:`~fusiondiff.records.errors.MissingPackageError` when torch or nvFuser, which its processes
    import, is not installed."""
    from fusiondiff.recording import live_side

    live_side.require("the round trip's replay")
    return ChildReplays(options, timeout_s, token, gate, forked, relay)


@contextlib.contextmanager
def replays_open(replay: ReplayFunction) -> Iterator[None]:
    """While the workers run: afterwards the replay's fork server, if it made one, is stopped."""
    try:
        yield
    finally:
        close = getattr(replay, "close", None)
        if callable(close):
            close()


def forked_ahead(replay: ReplayFunction, start_ahead: StartAhead | None) -> bool:
    """Whether ``replay``'s processes started ahead were forked from its server: what happened, not
    what was asked (a server that could not serve left every replay fresh)."""
    return start_ahead is not None and bool(getattr(replay, "forked", False))


def nothing_to_replay(scripts: Sequence[str], output: Path, device: str | None) -> None:
    """The replay of a round trip whose replays are all kept: never called."""
    raise AssertionError("every distinct fusion has its replay: nothing is replayed")
