"""Fusion inputs: their metadata, storage-faithful copies, and tensors rebuilt from a capture.

nvFuser picks kernels from sizes, strides and the data pointer's alignment (vectorization), and
index inputs decide gathers; so a copy used for timing, or an input rebuilt for a replay, must keep
the storage offset (hence the alignment) and the strides, not just the shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fusiondiff.recording.synthesis import (
    INT_RANGES,
    exact_storage,
    int_range,
    pin_range,
    synthesize_storage,
    synthesized_numel,
)
from fusiondiff.records.errors import ReplayError
from fusiondiff.records.model import TensorMeta, alignment_of

_INTEGER_KINDS = ("int", "uint", "bool")


def _is_tensor(value: Any) -> bool:
    import torch

    return isinstance(value, torch.Tensor)


def quick_signature(inputs: Sequence[Any]) -> tuple[Any, ...]:
    """What decides a distinct execution, cheap enough for every call (no device sync)."""
    sig: list[tuple[Any, ...]] = []
    for value in inputs:
        if _is_tensor(value):
            sig.append(
                (
                    str(value.dtype),
                    tuple(value.shape),
                    tuple(value.stride()),
                    alignment_of(value.data_ptr()),
                    str(value.device),
                )
            )
        else:
            sig.append((type(value).__name__,))
    return tuple(sig)


def describe_input(index: int, value: Any) -> TensorMeta:
    """Metadata of one input; integer tensors also get their value range (one device sync)."""
    if not _is_tensor(value):
        return TensorMeta(index=index, kind="scalar", dtype=type(value).__name__, scalar_value=repr(value))
    import torch

    min_value = max_value = None
    is_integer = not value.dtype.is_floating_point and not value.dtype.is_complex
    if is_integer and value.numel() > 0:
        wide = value.to(torch.int64) if value.dtype == torch.bool else value
        min_value, max_value = float(wide.min().item()), float(wide.max().item())
    return describe_layout(index, value, min_value=min_value, max_value=max_value)


def describe_layout(index: int, value: Any, **values: Any) -> TensorMeta:
    """A tensor's layout (dtype, shape, strides, storage, device, alignment) as the fusion saw it,
    reading nothing on the GPU; ``values``: the record's other fields (a value range)."""
    return TensorMeta(
        index=index,
        kind="tensor",
        dtype=str(value.dtype),
        shape=tuple(value.shape),
        stride=tuple(value.stride()),
        storage_offset=value.storage_offset(),
        storage_numel=value.untyped_storage().nbytes() // value.element_size(),
        device=str(value.device),
        alignment_bytes=alignment_of(value.data_ptr()),
        is_contiguous=value.is_contiguous(),
        **values,
    )


def describe_inputs(inputs: Sequence[Any]) -> tuple[TensorMeta, ...]:
    return tuple(describe_input(i, v) for i, v in enumerate(inputs))


def describe_outputs(outputs: Any) -> tuple[TensorMeta, ...]:
    """Layout of the tensors an execution returned (no value ranges: nothing waits for the GPU);
    anything else it returned is left out."""
    if not isinstance(outputs, (list, tuple)):
        outputs = [outputs]
    return tuple(describe_layout(i, value) for i, value in enumerate(outputs) if _is_tensor(value))


def flat_storage(value: Any) -> Any:
    """The whole storage behind a tensor as a 1-D tensor of its dtype (what safetensors can hold)."""
    import torch

    numel = value.untyped_storage().nbytes() // value.element_size()
    flat = torch.empty(0, dtype=value.dtype, device=value.device)
    flat.set_(value.untyped_storage(), 0, (numel,), (1,))
    return flat


def faithful_copy(value: Any) -> Any:
    """A copy with the same storage size, offset and strides, so alignment and layout are kept.

    Timing runs on these copies: a fusion that writes into its inputs (in-place updates, aliased
    outputs) then never changes the session's tensors.
    """
    if not _is_tensor(value):
        return value
    storage = flat_storage(value).clone()
    return storage.as_strided(value.shape, value.stride(), value.storage_offset())


def materialize(meta: TensorMeta, saved: dict[str, Any] | None = None, device: str | None = None) -> Any:
    """Rebuild an input from its metadata: the exact saved storage when there is one, otherwise a
    synthesized storage with the same size, offset, strides and integer value range, drawn as a
    repro script draws it (:mod:`fusiondiff.recording.synthesis`)."""
    if meta.kind == "scalar":
        import ast

        if meta.scalar_value is None:
            raise ReplayError(f"input {meta.index}: scalar without a recorded value")
        return (
            ast.literal_eval(meta.scalar_value)
            if meta.scalar_value not in ("inf", "-inf", "nan")
            else float(meta.scalar_value)
        )
    import torch

    dtype = getattr(torch, meta.dtype.removeprefix("torch."))
    target = device or meta.device
    bounds: tuple[int, int] | None = None
    if saved is not None and meta.tensor_key in saved:
        storage = exact_storage(saved, meta.tensor_key, dtype, target)
    else:
        numel = synthesized_numel(meta)
        if meta.dtype in INT_RANGES:
            low, high, _ = int_range(meta.dtype, meta.min_value, meta.max_value)
            bounds = (low, high)
            storage = synthesize_storage(numel, dtype, target, low, high)
        else:
            storage = synthesize_storage(numel, dtype, target)
    tensor = storage.as_strided(meta.shape, meta.stride, meta.storage_offset)
    if bounds is not None:
        pin_range(tensor, *bounds)
    got = alignment_of(tensor.data_ptr())
    if min(got, 16) != min(meta.alignment_bytes, 16):
        raise ReplayError(
            f"input {meta.index}: rebuilt tensor is {got}-byte aligned, the capture had {meta.alignment_bytes}"
        )
    return tensor
