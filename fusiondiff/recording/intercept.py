"""What runs in place of ``FusionDefinition.execute`` while a recorder is installed.

The session's own call runs untouched and returns its own outputs; around it, the recorder sees the
execution before it runs (its inputs described and copied: a fusion may write into them) and after
it returned, and the host's clock is read around every part so fusiondiff's own work is kept apart
from the session's (:mod:`fusiondiff.recording.host_time`). A new execution is synchronized on its
own stream, so a fault it causes surfaces on it. While the recorder is timing, or once the process
is being stopped (SIGTERM, Ctrl-C), calls pass straight through.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, Protocol

from fusiondiff.recording.executions import Seen
from fusiondiff.recording.host_time import SessionHostTimes
from fusiondiff.recording.sampling import Sampler
from fusiondiff.records import termination
from fusiondiff.records.distributed import synchronize_own_work


class Watcher(Protocol):
    """What the wrapper calls on its recorder (:class:`~fusiondiff.recording.recorder.Recorder`)."""

    sampler: Sampler
    host: SessionHostTimes

    def override_inputs(self, fd: Any, inputs: Any) -> Any:
        """The inputs the execution runs on: the ones given, or a replay's saved ones."""

    def before(self, fd: Any, inputs: Sequence[Any], kwargs: dict[str, Any]) -> Seen | None:
        """Before the execution: its key, and for a new one its inputs described and copied."""

    def is_pending(self, key: Hashable) -> bool:
        """A call of this key is a repeat: one is recorded and waits for its timing."""

    def is_new(self, seen: Seen) -> bool:
        """A first execution of its kind."""

    def failed(self, seen: Seen, exc: BaseException) -> None:
        """The execution raised."""

    def after(self, seen: Seen) -> None:
        """The execution returned."""


def intercepting(recorder: Watcher, original: Callable[..., Any]) -> Callable[..., Any]:
    """``original`` (``FusionDefinition.execute``) wrapped for ``recorder``."""

    def execute(fd: Any, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        if recorder.sampler.timing_here() or termination.requested.is_set():
            # being stopped (SIGTERM, Ctrl-C): the session's remaining work runs untouched and
            # untimed, so the stop takes effect when the main thread next runs Python
            return original(fd, inputs, *args, **kwargs)
        entered = recorder.host.clock()
        inputs = recorder.override_inputs(fd, inputs)
        seen = recorder.before(fd, inputs, kwargs)
        repeat = seen is not None and recorder.is_pending(seen.key)  # a first call compiles
        launched = recorder.host.clock()
        try:
            outputs = original(fd, inputs, *args, **kwargs)
            returned = recorder.host.clock()
            if seen is not None and recorder.is_new(seen):
                # kernels run asynchronously: a fault (an out-of-bounds gather) surfaces at the
                # next CUDA call, so make it surface here, on the fusion that caused it
                synchronize_own_work()  # its stream only: NCCL's wait on the other ranks
        except BaseException as exc:
            if seen is not None:
                recorder.failed(seen, exc)
            raise
        if seen is not None:
            recorder.after(seen)
        own_ns = launched - entered + recorder.host.clock() - returned  # fusiondiff's, not the session's
        recorder.host.execute(seen.key if seen else None, repeat, returned - launched, own_ns)
        return outputs

    return execute
