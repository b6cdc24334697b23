"""The recorder: intercepts ``FusionDefinition.execute`` and turns executions into records.

Live capture and replay use this same class, so both sides have the same records and the same
timing protocol. The patch is on the class, so it sees Thunder's ``FusionDefinitionWrapper``, a
repro script, and anything else that executes a fusion.

What the session computes is never changed: the caller's execution runs untouched and returns its
own outputs; timing re-executes the fusion afterwards on storage-faithful copies of the inputs, with
the CUDA RNG state saved and restored around it. The inputs of a new execution are described and
copied *before* it runs: a fusion that writes into its inputs (an output aliased to an input) would
otherwise be recorded, saved and timed with the values it wrote rather than those it read.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any

from fusiondiff.recording import cupti_owner
from fusiondiff.recording import inputs as input_tools
from fusiondiff.recording import nvfuser_adapter as nvf
from fusiondiff.recording.environment import collect_environment, settled_environment
from fusiondiff.recording.executions import (
    OUT_OF_MEMORY,
    InputOverride,
    Label,
    Pending,
    Seen,
    is_out_of_memory,
    release_cached_memory,
    untimed_record,
    writes_into_inputs,
)
from fusiondiff.recording.host_time import SessionHostTimes
from fusiondiff.recording.intercept import intercepting
from fusiondiff.recording.kineto import profiler_active
from fusiondiff.recording.peak import with_peak
from fusiondiff.recording.sampling import Sampler
from fusiondiff.recording.timing import KernelSource, noise_summary
from fusiondiff.records.definition import definition_hash, structural_hash
from fusiondiff.records.environment import Environment
from fusiondiff.records.errors import CaptureError, FusionDiffError, ProfilerError, exception_line
from fusiondiff.records.model import (
    Capture,
    CaptureKind,
    TensorMeta,
    TimingProtocol,
    traced_name,
)
from fusiondiff.records.options import RecordingOptions
from fusiondiff.records.progress import Progress, silent


class Recorder:
    """Records every distinct fusion execution while installed.

    ``timing="inline"`` times a new execution right after it ran (memory is released at once);
    ``"deferred"`` keeps input copies and times everything in :meth:`finish` (used by replay, so a
    script's own profiler never overlaps ours). Inline timing is deferred automatically while a
    torch profiler is already running. ``kernel_source`` times every sample (tests give a scripted
    one); by default, the source the protocol's method names
    (:data:`fusiondiff.recording.sources.KERNEL_SOURCES`).
    """

    def __init__(
        self,
        kind: CaptureKind,
        options: RecordingOptions | None = None,
        *,
        timing: str = "inline",
        progress: Progress | None = None,
        input_override: InputOverride | None = None,
        source: str = "",
        log_file: str | None = None,
        kernel_source: KernelSource | None = None,
    ):
        if timing not in ("inline", "deferred"):
            raise ValueError(f"timing must be 'inline' or 'deferred', not {timing!r}")
        options = options or RecordingOptions()
        self.kind = kind
        self.sampler = Sampler(options.protocol, kernel_source)
        self.timing_mode = timing
        self.only = set(options.only) or None
        self.save_inputs = options.save_inputs
        self.cuda_source = options.cuda_source
        self.peak = options.peak
        self.progress = progress or silent
        self.input_override = input_override
        self.source = source
        self.warnings: list[str] = []
        self.errors: list[FusionDiffError] = []
        self.tensors: dict[str, Any] = {}
        self._pending: dict[tuple[Any, ...], Pending] = {}
        self._snapshots = 0
        self.names_seen: set[str] = set()
        """Every fusion name executed, recorded or not (to explain an ``only`` that matched nothing)."""
        self._order: list[tuple[Any, ...]] = []
        self._definitions: dict[int, tuple[Any, str, str, str]] = {}
        self._script_names: dict[int, str] = {}
        self._local = threading.local()
        self._lock = threading.RLock()
        self._original_execute: Callable[..., Any] | None = None
        self._execute_untraced: Callable[..., Any] | None = None
        self._environment: Environment | None = None
        self.log_file = log_file
        """Named on failure records: where the run's full output (C++ stacks) is kept."""
        self.name_prefix = ""
        """Put before ``fusion<N>`` for unlabelled fusions (the script's name when several run)."""
        self.context_lost: str | None = None
        """Why the CUDA context can no longer be used (an illegal address): nothing more is timed."""
        self.out_of_memory = 0
        """How many records were kept untimed because the GPU had no memory to time them."""
        self.host = SessionHostTimes()
        """Host times of the session's own calls (:mod:`fusiondiff.recording.host_time`)."""

    @property
    def protocol(self) -> TimingProtocol:
        """How the samples are taken (the sampler's: it fills in the L2 flush size)."""
        return self.sampler.protocol

    # ---------------------------------------------------------------- install / labels

    def install(self) -> None:
        """Patch ``FusionDefinition.execute``; :meth:`uninstall` restores it. Raises
        :class:`CaptureError` when nvFuser does not import or no CUDA device is visible."""
        fd_class = nvf.frontend().FusionDefinition
        import torch

        if not torch.cuda.is_available():
            raise CaptureError("no CUDA device: fusiondiff capture and replay need a GPU")
        if self._original_execute is not None:
            raise CaptureError("this recorder is already installed")
        if getattr(fd_class.execute, "__fusiondiff_recorder__", None) is not None:
            raise CaptureError("another fusiondiff capture is already active in this process")
        self._original_execute = fd_class.execute
        # kept after uninstall: deferred timing in finish() runs the original execute
        self._execute_untraced = fd_class.execute
        self._environment = collect_environment()
        self.sampler.l2_bytes = self._environment.l2_bytes if self._environment else None
        # from now on a torch profiler the session starts is known to hold CUPTI (cupti_owner)
        cupti_owner.watch()
        # part of the protocol whether or not anything gets timed (a replay that crashes first);
        # every sample runs on storage-faithful copies of the inputs (see _before_locked)
        self.sampler.protocol = dataclasses.replace(
            self.protocol, flush_bytes=self.sampler.flush_bytes(), on_copies=True
        )
        original = fd_class.execute
        execute = intercepting(self, original)
        execute.__fusiondiff_recorder__ = self  # type: ignore[attr-defined]
        execute.__wrapped__ = original  # type: ignore[attr-defined]
        fd_class.execute = execute

    def uninstall(self) -> None:
        if self._original_execute is None:
            return
        nvf.frontend().FusionDefinition.execute = self._original_execute
        self._original_execute = None

    @contextlib.contextmanager
    def labelled(self, label: Label) -> Iterator[None]:
        """Executions inside this block are recorded under ``label`` (Thunder's region name)."""
        previous = getattr(self._local, "label", None)
        self._local.label = label
        try:
            yield
        finally:
            self._local.label = previous

    # ---------------------------------------------------------------- observing executions

    def _definition(self, fd: Any) -> tuple[str, str, str]:
        """The definition's text, its hash, and its structural hash (what captures are matched on)."""
        cached = self._definitions.get(id(fd))
        if cached is None or cached[0] is not fd:
            text = nvf.definition_text_or_note(fd)
            # keep fd alive so its id is never reused for another definition
            cached = (fd, text, definition_hash(text), structural_hash(text))
            self._definitions[id(fd)] = cached
        return cached[1], cached[2], cached[3]

    def override_inputs(self, fd: Any, inputs: Any) -> Any:
        if self.input_override is None:
            return inputs
        # matched on the structural hash, like the differ: the script may be a rebuilt print of
        # the live definition, with other value names and no-op casts
        *_, structure = self._definition(fd)
        replacement = self.input_override(structure, inputs)
        return inputs if replacement is None else list(replacement)

    def _label(self, fd: Any) -> Label:
        label = getattr(self._local, "label", None)
        if label is not None:
            return label
        name = self._script_names.get(id(fd))
        if name is None:
            count = sum(1 for n in self._script_names.values() if n.startswith(self.name_prefix))
            name = self._script_names[id(fd)] = f"{self.name_prefix}fusion{count}"
        return Label(name=name)

    @contextlib.contextmanager
    def _locked_keeping_errors(self) -> Iterator[None]:
        """Hold the lock; keep a recording failure in :attr:`errors` instead of raising it into the
        user's session (``finish`` reports it)."""
        try:
            with self._lock:
                yield
        except FusionDiffError as exc:
            self.errors.append(exc)
        except Exception as exc:  # noqa: BLE001 - a recording failure must not break the session
            self.errors.append(CaptureError(f"recording failed: {type(exc).__name__}: {exception_line(exc)}"))

    def before(self, fd: Any, inputs: Sequence[Any], kwargs: dict[str, Any]) -> Seen | None:
        """Before an execution: its key, and for a new one the inputs as the fusion will read them."""
        with self._locked_keeping_errors():
            return self._before_locked(fd, list(inputs), kwargs)
        return None  # the failure was kept

    def after(self, seen: Seen) -> None:
        """After the execution succeeded: count a repeat, or record (and time inline) a new one."""
        with self._locked_keeping_errors():
            self._after_locked(seen)

    def _before_locked(self, fd: Any, inputs: list[Any], kwargs: dict[str, Any]) -> Seen | None:
        label = self._label(fd)
        self.names_seen.add(label.name)
        if self.only is not None and label.name not in self.only:
            return None
        enable = tuple(kwargs.get("_enable_options") or ())
        disable = tuple(kwargs.get("_disable_options") or ())
        key = (label.name, label.trace, id(fd), input_tools.quick_signature(inputs), enable, disable)
        seen = Seen(key=key, fd=fd, label=label, inputs=inputs, kwargs=kwargs)
        if key in self._pending:
            return seen
        seen.metas = list(input_tools.describe_inputs(inputs))
        if self.save_inputs:
            # a counter, not len(self._order): two threads may be between before and after at once
            index = self._snapshots
            self._snapshots += 1
            for i, value in enumerate(inputs):
                if seen.metas[i].kind == "tensor":
                    tensor_key = f"{index}/input{i}"
                    seen.saved[tensor_key] = input_tools.flat_storage(value).detach().to("cpu", copy=True)
                    seen.metas[i] = dataclasses.replace(seen.metas[i], tensor_key=tensor_key)
        text, *_ = self._definition(fd)
        if text.startswith(nvf.UNPRINTABLE) or writes_into_inputs(text):  # unprintable: it may write
            self._copy_inputs(seen)
        else:
            seen.copy_after = True
        return seen

    def _copy_inputs(self, seen: Seen) -> None:
        """Storage-faithful copies of a new execution's inputs, for timing; without the memory for
        them, the record is kept untimed (the session's own execution is not touched)."""
        try:
            seen.copies = [input_tools.faithful_copy(v) for v in seen.inputs]
        except Exception as exc:
            if not is_out_of_memory(exc):
                raise
            seen.copies, seen.out_of_memory = [], True
            release_cached_memory()

    def is_pending(self, key: Hashable) -> bool:
        """An execution of this key is recorded and waits for its timing: a call of it is a repeat."""
        return key in self._pending

    def is_new(self, seen: Seen) -> bool:
        """A first execution of its kind (not a repeat of a recorded one)."""
        return (seen.copies is not None or seen.copy_after) and seen.key not in self._pending

    def failed(self, seen: Seen, exc: BaseException) -> None:
        """The execution raised: keep its record, with its inputs and the failure, untimed. After an
        illegal address the CUDA context is lost, so nothing else is timed either."""
        with self._locked_keeping_errors():
            failure = nvf.classify_failure(exc, self.log_file)
            if failure.kind == "illegal_address":
                self.context_lost = f"{seen.label.name} hit an illegal memory access"
            pending = self._pending.get(seen.key)
            if pending is None:
                if seen.copies is None and not seen.copy_after:
                    return
                seen.copies = seen.copies or []  # a failed execution is not timed: nothing to copy
                self._new_record(seen, time_now=False)
                pending = self._pending[seen.key]
            pending.record = dataclasses.replace(pending.record, failure=pending.record.failure or failure)
            pending.copies = None
            self.progress(f"fusiondiff: {seen.label.name} failed: {failure.message}")

    def _after_locked(self, seen: Seen) -> None:
        pending = self._pending.get(seen.key)
        if pending is not None:
            pending.calls += 1
            return
        if seen.copies is None and not seen.copy_after:
            # a repeat when before saw it, yet no longer pending: nothing to record it with
            return
        if seen.copy_after:
            self._copy_inputs(seen)
        self._new_record(seen, time_now=self.timing_mode == "inline" and not profiler_active())

    def _new_record(self, seen: Seen, time_now: bool) -> None:
        """Record a new distinct execution; time it now, or keep its input copies for later."""
        fd, kwargs = seen.fd, seen.kwargs
        text, digest, _ = self._definition(fd)
        record = untimed_record(seen, text, digest)
        self.tensors.update(seen.saved)
        execute_kwargs = {k: v for k, v in kwargs.items() if k in ("device", "_enable_options", "_disable_options")}
        pending = Pending(record=record, fd=fd, copies=None, execute_kwargs=execute_kwargs)
        self._pending[seen.key] = pending
        self._order.append(seen.key)
        copies, seen.copies, seen.inputs = seen.copies, None, []
        assert copies is not None  # a new execution (is_new) always has its copies
        if seen.out_of_memory:
            self._keep_untimed_for_memory(pending)
        elif time_now:
            self._time_if_memory(pending, copies)
        else:
            pending.copies = copies

    def _keep_untimed_for_memory(self, pending: Pending) -> None:
        pending.copies = None
        pending.record = dataclasses.replace(pending.record, warnings=(*pending.record.warnings, OUT_OF_MEMORY))
        self.out_of_memory += 1
        self.progress(f"fusiondiff: {pending.record.name}: {OUT_OF_MEMORY}")

    def _time_if_memory(self, pending: Pending, copies: list[Any]) -> None:
        """Time ``pending``; if the GPU runs out of memory doing so, keep the record untimed (the
        other records and the session are unharmed: the memory is given back)."""
        try:
            self._time(pending, copies)
        except Exception as exc:
            if not is_out_of_memory(exc):
                raise
            self.sampler.release()
            release_cached_memory()
            self._keep_untimed_for_memory(pending)

    # ---------------------------------------------------------------- timing

    def _time(self, pending: Pending, copies: list[Any]) -> None:
        fd, kwargs = pending.fd, pending.execute_kwargs
        original = self._execute_untraced
        assert original is not None, "install() sets the original execute"

        outputs: list[tuple[TensorMeta, ...]] = []

        def run_once() -> None:
            result = original(fd, copies, **kwargs)
            if not outputs:  # the first warm-up, whose host time the protocol leaves out
                outputs.append(input_tools.describe_outputs(result))

        record = self.sampler.time(
            pending.record, run_once, fd, copies, keep_cuda_source=self.cuda_source, warnings=self.warnings
        )
        record = dataclasses.replace(record, outputs=outputs[0] if outputs else ())
        pending.record = record
        pending.copies = None
        timing = record.timing
        self.progress(
            f"fusiondiff: {traced_name(record.name, record.trace)}: {len(record.kernels)} kernel(s), "
            f"{noise_summary(timing.samples_ns)} over {timing.count} {self.protocol.l2_mode}-L2 samples"
        )

    # ---------------------------------------------------------------- result

    @property
    def fusion_count(self) -> int:
        return len(self._order)

    def finish(self) -> Capture:
        """Time what is still pending, release the flush buffer, and return the capture.

        Raises :class:`ProfilerError` if a recording failed (never writes zeros), and
        :class:`CaptureError` if nothing was recorded.
        """
        try:
            for key in self._order:
                pending = self._pending[key]
                if pending.copies is not None and self.context_lost:
                    pending.copies = None
                    pending.record = dataclasses.replace(
                        pending.record, warnings=(*pending.record.warnings, f"not timed: {self.context_lost}")
                    )
                if pending.copies is not None:
                    if profiler_active():
                        raise ProfilerError("a torch profiler is still running; fusiondiff cannot time inside it")
                    copies, pending.copies = pending.copies, None
                    try:
                        self._time_if_memory(pending, copies)
                    except FusionDiffError as exc:
                        self.errors.append(exc)
                    except Exception as exc:  # noqa: BLE001 - a CUDA fault while timing: keep the records
                        failure = nvf.classify_failure(exc, self.log_file)
                        if failure.kind != "illegal_address":
                            raise
                        self.context_lost = f"{pending.record.name} hit an illegal memory access while timed"
                        pending.record = dataclasses.replace(pending.record, failure=failure)
        finally:
            self.sampler.release()
        if self.errors:
            unique = list(dict.fromkeys(str(e) for e in self.errors))
            message = unique[0] + (f" (and {len(unique) - 1} more errors)" if len(unique) > 1 else "")
            profiler_trouble = any(isinstance(e, ProfilerError) for e in self.errors)
            raise (ProfilerError if profiler_trouble else CaptureError)(message)
        if not self._order:
            raise CaptureError("no nvFusion was executed while recording")
        fusions = tuple(
            self.host.with_host_times(
                dataclasses.replace(self._pending[k].record, call_count=self._pending[k].calls), k
            )
            for k in self._order
        )
        warnings = list(self.warnings)
        if self.out_of_memory:
            warnings.append(f"{self.out_of_memory} fusion(s) not timed: the GPU ran out of memory")
        notice = self.session_notice()
        if notice is not None:
            self.progress(notice)
        environment = settled_environment(self._environment, fusions)
        if self.peak and self.context_lost is None:
            environment = with_peak(environment, warnings, self.progress)
        return Capture(
            kind=self.kind,
            environment=environment,
            protocol=self.protocol,
            fusions=fusions,
            source=self.source,
            warnings=tuple(warnings),
        )

    def session_notice(self) -> str | None:
        """What recording left in this process that the user's session should know, said once and
        not stored in the capture: the profiler it used holds CUPTI for good. Only where the process
        goes on afterwards (``with fusiondiff.capture():`` in the user's own session); a script under
        ``fusiondiff capture`` and a replay end with the recording, and every round-trip replay would
        repeat it."""
        if not (self.kind == "live" and self.source == "session"):
            return None
        return self.sampler.cupti_notice()
