"""One fusion execution as the recorder holds it: seen (:class:`Seen`, between the execution's start
and end) and recorded but not yet timed (:class:`Pending`), with what is read off an execution
(its device, whether it writes into its inputs, whether a failure was for want of memory)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from fusiondiff.recording import nvfuser_adapter as nvf
from fusiondiff.recording.environment import current_device_index
from fusiondiff.records.definition import definition_calls, tagged_structural_hash
from fusiondiff.records.model import FusionRecord, Segmentation, Timing

OUT_OF_MEMORY = "not timed: the GPU ran out of memory for fusiondiff's copies of its inputs and its L2 flush buffer"
"""The warning on a record that could not be timed for want of GPU memory."""

InputOverride = Callable[[str, Sequence[Any]], Sequence[Any] | None]
"""Given a definition's structural hash and the script's inputs, the inputs to use instead (or None)."""


@dataclass(frozen=True)
class Label:
    """What the caller knows about the fusion being executed (Thunder's region name, pass...)."""

    name: str
    trace: str | None = None
    ops_summary: str | None = None
    exact_constants: tuple[str, ...] = ()


@dataclass
class Seen:
    """One execution between :meth:`Recorder._before` and :meth:`Recorder._after`. For a new
    distinct execution it holds the inputs' metadata, saved storages and copies taken before it ran."""

    key: tuple[Any, ...]
    fd: Any
    label: Label
    inputs: list[Any]
    kwargs: dict[str, Any]
    metas: list[Any] = dataclasses.field(default_factory=list)
    saved: dict[str, Any] = dataclasses.field(default_factory=dict)
    copies: list[Any] | None = None
    copy_after: bool = False
    """The fusion does not write into its inputs: copy them after it ran, so the session's own
    execution never shares the GPU's memory with fusiondiff's copies."""
    out_of_memory: bool = False
    """No GPU memory for its input copies: it will be recorded without timing."""


@dataclass
class Pending:
    """A distinct execution seen but not yet timed (deferred timing keeps its input copies)."""

    record: FusionRecord
    fd: Any
    copies: list[Any] | None
    execute_kwargs: dict[str, Any]
    calls: int = 1


def untimed_record(seen: Seen, text: str, digest: str) -> FusionRecord:
    """The record of a new distinct execution before it is timed: its definition (``text``, its
    hash ``digest`` and its graph hash, which the differ then need not compute again), inputs, options and device, and what nvFuser says of it (its repro script,
    its IR's exact constants), with a warning for each of those it could not give."""
    fd, label, kwargs = seen.fd, seen.label, seen.kwargs
    warnings: list[str] = [text.strip()[2:]] if text.startswith(nvf.UNPRINTABLE) else []
    repro, repro_warning = nvf.repro_script(fd, seen.inputs)
    if repro_warning:
        warnings.append(repro_warning)
    # the IR's constants on both sides of a diff; Thunder's, read from the region, only when
    # this nvFuser cannot print them
    constants, constants_warning = nvf.ir_constants(fd)
    if constants_warning:
        warnings.append(constants_warning)
    return FusionRecord(
        name=label.name,
        definition=text,
        definition_hash=digest,
        graph_hash=tagged_structural_hash(text),  # the recorder hashed it already: a cache hit
        inputs=tuple(seen.metas),
        kernels=(),
        segmentation=Segmentation(segments=()),
        timing=Timing(samples_ns=()),
        trace=label.trace,
        ops_summary=label.ops_summary,
        enable_options=tuple(kwargs.get("_enable_options") or ()),
        disable_options=tuple(kwargs.get("_disable_options") or ()),
        device_index=device_index(kwargs.get("device"), seen.inputs),
        repro_script=repro,
        exact_constants=constants if constants_warning is None else label.exact_constants,
        warnings=tuple(warnings),
    )


def device_index(device: Any, inputs: Sequence[Any]) -> int:
    """The CUDA device a fusion ran on: its first CUDA input's, else the ``device`` it was given,
    else the process's current device. Never a blind 0: under torchrun rank 1 runs on ``cuda:1``."""
    for value in inputs:
        dev: Any = getattr(value, "device", None)
        if getattr(dev, "type", None) == "cuda" and isinstance(getattr(dev, "index", None), int):
            return int(dev.index)
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    index = getattr(device, "index", None)
    if isinstance(index, int):
        return index
    return current_device_index()


def writes_into_inputs(definition: str) -> bool:
    """Whether a printed definition aliases an output to an input (``fd.add_output(out, input)``,
    Thunder's lowering of an in-place op): such a fusion changes its inputs as it runs."""
    return any(
        call.op == "add_output"
        and (len(call.call.args) >= 2 or any(k.arg == "alias_input" for k in call.call.keywords))
        for call in definition_calls(definition)
    )


def is_out_of_memory(exc: BaseException) -> bool:
    """A CUDA allocation failure: torch's, or nvFuser's own (a RuntimeError that says so)."""
    import torch

    if isinstance(exc, torch.OutOfMemoryError):
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


def release_cached_memory() -> None:
    import torch

    torch.cuda.empty_cache()
