"""Live capture inside a Thunder session.

``with fusiondiff.capture("live.json"):`` records every nvFusion executed in the block, forward
and backward. Under torchrun each rank writes its own file (``live.rank0.json``, ``live.rank1.json``:
:mod:`fusiondiff.records.distributed`). Thunder runs each nvFusion through a ``FusionDefinitionWrapper``
(thunder/executors/nvfuserex_impl.py) that picks a FusionDefinition from its cache and calls
``fd.execute(args, _enable_options=..., _disable_options=...)``. fusiondiff wraps that call only to
learn the region's name and pass, and intercepts the execute itself with the shared
:class:`~fusiondiff.recording.recorder.Recorder`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import runpy
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from fusiondiff.io.store import write_capture
from fusiondiff.recording import live_side
from fusiondiff.recording.communication import CommunicationTrace, communication_trace
from fusiondiff.recording.executions import Label
from fusiondiff.recording.recorder import Recorder
from fusiondiff.records.distributed import RankInfo, process_group_backend, rank_from_env, rank_path
from fusiondiff.records.errors import CaptureError, FusionDiffError, exception_line, not_a_file
from fusiondiff.records.model import Capture
from fusiondiff.records.options import RecordingOptions
from fusiondiff.records.progress import Progress
from fusiondiff.replay.timeline_recorder import recorder_class


class LiveCapture:
    """Handle returned by :func:`capture`; ``capture`` and ``path`` are set when the block exits."""

    def __init__(self, recorder: Recorder):
        self.recorder = recorder
        self.capture: Capture | None = None
        self.path: Path | None = None

    @property
    def fusion_count(self) -> int:
        """Distinct executions recorded so far."""
        return self.recorder.fusion_count


def _thunder_wrapper_class() -> Any | None:
    """Thunder's FusionDefinitionWrapper, or None when Thunder is not installed."""
    try:
        import thunder  # noqa: F401
    except ImportError:
        return None
    except Exception as exc:  # noqa: BLE001 - a broken install must be one line, not a traceback
        raise CaptureError(f"Thunder failed to import ({type(exc).__name__}: {exc})") from None
    try:
        from thunder.executors import nvfuserex_impl
    except Exception as exc:  # noqa: BLE001 - Thunder without a working nvFuser
        raise CaptureError(f"Thunder's nvFuser executor is not available ({type(exc).__name__}: {exc})") from None
    return nvfuserex_impl.FusionDefinitionWrapper


def _float_constants(bsyms: Sequence[Any]) -> tuple[str, ...]:
    """Full-precision float literals of a Thunder region's bound symbols (nvFuser prints 6 digits)."""
    found: set[float] = set()

    def visit(value: Any, depth: int) -> None:
        if depth > 6:
            return
        if isinstance(value, float):
            found.add(value)
        elif isinstance(value, (list, tuple)):
            for v in value:
                visit(v, depth + 1)
        elif isinstance(value, dict):
            for v in value.values():
                visit(v, depth + 1)
        elif hasattr(value, "sym") and hasattr(value, "args"):
            visit(value.args, depth + 1)
            visit(getattr(value, "kwargs", {}), depth + 1)
            visit(getattr(value, "subsymbols", ()), depth + 1)

    visit(list(bsyms), 0)
    return tuple(repr(v) for v in sorted(found) if v == v)


def _region_constants(wrapper: Any) -> tuple[str, ...]:
    """Constants of the region a wrapper executes, read from its ``get_fd`` closure (best effort:
    Thunder keeps the region's bound symbols there)."""
    fn = getattr(getattr(wrapper, "get_fd", None), "__wrapped__", None)
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            contents = cell.cell_contents
        except ValueError:
            continue
        if isinstance(contents, list) and contents and hasattr(contents[0], "sym"):
            return _float_constants(contents)
    return ()


def _in_backward() -> bool:
    import torch

    return torch._C._current_graph_task_id() != -1


@dataclasses.dataclass
class _Seen:
    """What the session showed while it ran, beside the fusions themselves."""

    regions: int = 0
    """Calls of Thunder's nvFusion regions (``FusionDefinitionWrapper``): none means Thunder ran no
    nvFusion at all, as opposed to nvFusions run through a path the recorder does not intercept."""
    backend: str | None = None
    """The process group's backend, read while the session had one (a script may destroy its group
    before the block ends)."""


@contextlib.contextmanager
def _label_thunder_regions(recorder: Recorder, wrapper_class: Any, seen: _Seen) -> Iterator[None]:
    original = wrapper_class.__call__
    constants: dict[int, tuple[Any, tuple[str, ...]]] = {}

    @functools.wraps(original)
    def call(self: Any, *args: Any) -> Any:
        seen.regions += 1
        if seen.backend is None:
            seen.backend = process_group_backend()
        name, _, ops = str(self.name).partition(":")
        cached = constants.get(id(self))
        if cached is None or cached[0] is not self:
            cached = (self, _region_constants(self))
            constants[id(self)] = cached
        label = Label(
            name=name.strip(),
            trace="backward" if _in_backward() else "forward",
            ops_summary=ops.strip() or None,
            exact_constants=cached[1],
        )
        with recorder.labelled(label), recorder.host.region():  # the region's host time, ours left out
            return original(self, *args)

    wrapper_class.__call__ = call
    try:
        yield
    finally:
        wrapper_class.__call__ = original


@contextlib.contextmanager
def _script_context(script: str, error: Callable[[], BaseException | None]) -> Iterator[None]:
    """Report a script's own failure rather than the empty capture it caused."""
    try:
        yield
    except CaptureError:
        failure = error()
        if failure is None:
            raise
        raise FusionDiffError(
            f"{script} raised {type(failure).__name__}: {exception_line(failure)}; nothing was recorded"
        ) from None


@contextlib.contextmanager
def capture(
    output: str | os.PathLike[str] | None = None,
    *,
    options: RecordingOptions | None = None,
    progress: Progress | None = None,
    source: str = "session",
    timing: str | None = None,
) -> Iterator[LiveCapture]:
    """Record every nvFusion executed inside the block; write ``output`` (JSON) when it ends
    (under torchrun, this rank's file: :func:`output_path`).

    The session computes exactly what it would without the capture: fusions are timed afterwards on
    copies of their inputs. No profiler is left running. Raises :class:`CaptureError` when no
    nvFusion ran (module not compiled by Thunder, or nvFuser not used) and writes nothing then.

    Under torchrun the session's collectives are recorded across the block, apart from the fusions
    (:mod:`fusiondiff.recording.communication`; ``options.communication`` False turns it off).

    ``timing``: ``"inline"`` times each new fusion right after it ran; ``"deferred"`` keeps copies
    of its inputs and times every fusion when the block ends. Default: :func:`timing_mode`.
    """
    options = options or RecordingOptions()
    timing = timing or timing_mode(rank_from_env())
    recorder = recorder_class(options)("live", options, timing=timing, progress=progress, source=source)
    handle = LiveCapture(recorder)
    seen = _Seen()
    # install first: it checks nvFuser and the GPU, and without a GPU Thunder's executor import
    # fails with a misleading error
    recorder.install()
    try:
        # under torchrun, the session's collectives across the block (apart from fusion time); its
        # profiler stops here, before finish() times the fusions, which refuses to time inside one
        with communication_trace(options.communication, options.timer) as communication:
            wrapper_class = _thunder_wrapper_class()
            if wrapper_class is None:
                recorder.warnings.append("Thunder is not installed: fusions are named by execution order")
                yield handle
            else:
                with _label_thunder_regions(recorder, wrapper_class, seen):
                    yield handle
    finally:
        recorder.uninstall()
    try:
        handle.capture = recorder.finish()
    except CaptureError:
        if recorder.fusion_count == 0 and options.only and recorder.names_seen:
            raise CaptureError(
                f"none of the fusions named by --only ({', '.join(options.only)}) ran; "
                f"these did: {', '.join(sorted(recorder.names_seen))}"
            ) from None
        if recorder.fusion_count == 0:
            raise CaptureError(
                f"no nvFusion was executed inside the capture block{_why_none(wrapper_class, seen)}"
            ) from None
        raise
    handle.capture = with_communication(handle.capture, communication)
    environment = handle.capture.environment
    if environment.rank is not None and environment.distributed_backend is None and seen.backend is not None:
        handle.capture = dataclasses.replace(
            handle.capture, environment=dataclasses.replace(environment, distributed_backend=seen.backend)
        )
    if output is not None:
        path = output_path(output)
        timelines = getattr(recorder, "timeline_arrays", None)
        handle.capture = write_capture(handle.capture, path, recorder.tensors or None, timelines)
        handle.path = path


def with_communication(capture: Capture, trace: CommunicationTrace) -> Capture:
    """``capture`` with the communication kernels the trace recorded, and its warning."""
    if not trace.kernels and trace.warning is None:
        return capture
    warnings = capture.warnings if trace.warning is None else (*capture.warnings, trace.warning)
    return dataclasses.replace(capture, communication=trace.kernels, warnings=warnings)


def _why_none(wrapper_class: Any, seen: _Seen) -> str:
    """The hint of the empty capture's error: what the session did run."""
    if wrapper_class is None:
        return "; Thunder is not installed, and no FusionDefinition.execute ran"
    if seen.regions:
        return (
            f"; Thunder called {seen.regions} nvFusion region(s), but no FusionDefinition.execute reached "
            "the recorder: they ran through a path it does not intercept"
        )
    return (
        "; Thunder ran no nvFusion region: is the module compiled with thunder.jit or thunderfx, with the "
        "nvFuser executor? (under thunderfx, regions Thunder does not take go to inductor or eager)"
    )


def timing_mode(rank: RankInfo | None) -> str:
    """When a live capture times its fusions: right after each one ran (``inline``), or, for a rank
    of a multi-process session, when the capture block ends (``deferred``).

    A rank's timing must not wait on its collectives. Inline, it would: torch.profiler synchronizes
    the whole device when its window closes (``torch.autograd.profiler.profile.__exit__``), and the
    device holds NCCL's kernels still waiting for the other ranks (DDP's gradient all-reduce launched
    during backward, FSDP's prefetched all-gather); a rank timing a fusion the others do not (an
    input at another offset) would hold them all, and a collective spinning on SMs during a sample
    would be timed as the fusion's. Deferred, the session runs at its own pace, and when the block
    ends every collective this rank launched has been launched by the others too (they run the
    same program): the first synchronize drains them, and nothing communicates while the samples
    run. The price is memory: a copy of each distinct fusion's inputs is kept until the end.
    """
    return "inline" if rank is None else "deferred"


def output_path(output: str | os.PathLike[str]) -> Path:
    """Where this process writes ``output``: the path itself, or under torchrun (a world of two or
    more) this rank's own file, ``live.rank1.json``, so no rank overwrites another's."""
    info = rank_from_env()
    return Path(output) if info is None else rank_path(output, info.rank)


def capture_script(
    script: str,
    args: Sequence[str],
    *,
    output: str | os.PathLike[str],
    options: RecordingOptions | None = None,
    progress: Progress | None = None,
) -> Path:
    """Run ``script`` as ``__main__`` under :func:`capture` (like ``python -m cProfile``). Raises
    :class:`~fusiondiff.records.errors.MissingPackageError` before running it when torch or nvFuser is missing."""
    path = Path(script)
    problem = not_a_file(script, "script (.py)")
    if problem:
        raise FusionDiffError(problem)
    live_side.require("the capture")
    source = " ".join([script, *args])
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [str(path), *args]
    sys.path.insert(0, str(path.resolve().parent))
    script_error: BaseException | None = None
    try:
        with (
            _script_context(script, lambda: script_error),
            capture(output, options=options, progress=progress, source=source) as handle,
        ):
            try:
                runpy.run_path(str(path), run_name="__main__")
            except SystemExit as exc:
                if exc.code not in (None, 0):
                    script_error = exc
            except Exception as exc:  # noqa: BLE001 - the script's error is reported after saving
                script_error = exc
                if handle.fusion_count:
                    handle.recorder.warnings.append(f"the script raised {type(exc).__name__}: {exc}")
    finally:
        sys.argv, sys.path = saved_argv, saved_path
    if handle.path is None:
        raise CaptureError("nothing was written")
    if script_error is not None:
        raise FusionDiffError(
            f"{script} raised {type(script_error).__name__}: {exception_line(script_error)}; "
            f"the {handle.fusion_count} fusion(s) recorded before it were written to {handle.path}"
        )
    untimed = handle.recorder.out_of_memory
    if untimed:
        raise FusionDiffError(
            f"the GPU ran out of memory: {untimed} of {handle.fusion_count} fusion(s) were recorded without "
            f"timing (fusiondiff times each on copies of its inputs); the capture is written to {handle.path}"
        )
    return handle.path
