"""Inputs made up from their recorded layout: the one place fusiondiff synthesizes a tensor.

``fusiondiff replay --inputs`` calls these functions (:func:`fusiondiff.recording.inputs.materialize`),
and ``fusiondiff repro`` copies the source of :data:`SCRIPT_HELPERS` into the scripts it writes
(``inspect.getsource``), so a replay and a repro script draw inputs the same way. Those functions
therefore use only torch and the standard library, import torch themselves, and call nothing
but each other (and :func:`fusiondiff.records.model.alignment_of`, copied with them): a script must run
where fusiondiff is not installed. Importing this module does
not import torch.
"""

from __future__ import annotations

import math
import sys
from typing import Any

from fusiondiff.records.model import TensorMeta, alignment_of, view_extent

INT_RANGES = {
    "torch.uint8": (0, 2**8 - 1),
    "torch.int8": (-(2**7), 2**7 - 1),
    "torch.int16": (-(2**15), 2**15 - 1),
    "torch.uint16": (0, 2**16 - 1),
    "torch.int32": (-(2**31), 2**31 - 1),
    "torch.uint32": (0, 2**32 - 1),
    "torch.int64": (-(2**63), 2**63 - 1),
    "torch.uint64": (0, 2**64 - 1),
}
"""Integer dtypes (as ``str(torch.dtype)``) and the values each holds; bool is drawn as 0 or 1."""
DEFAULT_RANGE = (0, 9)
"""Integer values when the capture did not record a range: nvFuser's own repro draws 0..9 too."""


def int_range(dtype: str, min_value: float | None, max_value: float | None) -> tuple[int, int, bool]:
    """The inclusive range to draw an integer input of ``dtype`` from: the recorded one, clipped
    so that ``high + 1`` (randint's exclusive bound) still fits the dtype, or
    :data:`DEFAULT_RANGE`; and whether it was recorded."""
    if (
        min_value is None
        or max_value is None
        or not (math.isfinite(min_value) and math.isfinite(max_value))
        or min_value > max_value
    ):
        return (*DEFAULT_RANGE, False)
    dmin, dmax = INT_RANGES[dtype]
    # randint's bound is exclusive and must fit the dtype, so the dtype's largest value is given up.
    return max(math.floor(min_value), dmin), min(math.ceil(max_value), dmax - 1), True


def synthesized_numel(meta: TensorMeta) -> int:
    """Elements of a synthesized storage: the recorded storage size, grown to what ``as_strided``
    reaches (:func:`~fusiondiff.records.model.view_extent`) when the record says less."""
    return max(int(meta.storage_numel), view_extent(meta))


# --------------------------------------------------------------------------------------------
# Copied into repro scripts: torch and the standard library only.


def synthesize_storage(numel, dtype, device, low=0, high=9):
    """A fresh flat storage of ``numel`` random values; integers in ``[low, high]``."""
    import torch

    # A fresh storage: the caching allocator aligns it to 512 bytes, so the recorded storage
    # offset alone gives the data pointer the alignment it had in the recording.
    if dtype.is_floating_point or dtype.is_complex:
        # randn has no kernels for 1-byte floats: draw in float32 and convert.
        draw = dtype if dtype.itemsize > 1 else torch.float32
        return torch.randn(numel, dtype=draw, device=device).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, (numel,), device=device).bool()
    return torch.randint(low, high + 1, (numel,), dtype=dtype, device=device)


def pin_range(tensor, low, high):
    """Write ``low`` and ``high`` into the view's first and last elements."""
    # A random draw rarely hits the recorded extremes: with them written in, the input holds
    # exactly the recorded value range (so a replay records the same range).
    if tensor.dim() == 0 or tensor.numel() == 0:
        return
    tensor[(0,) * tensor.dim()] = low
    tensor[tuple(size - 1 for size in tensor.shape)] = high


def exact_storage(saved, key, dtype, device):
    """A saved input's whole storage, copied to ``device``."""
    # Each saved tensor is the input's whole storage, flat. Copied into a fresh storage (aligned
    # to 512 bytes by the caching allocator) so the storage offset sets the alignment.
    return saved[key].to(device, copy=True).view(dtype)


def check_alignment(index, tensor, recorded):
    """Warn on stderr when an input's data pointer is aligned otherwise than in the recording."""
    # nvFuser vectorizes by the alignment, so another alignment can mean another kernel.
    got = alignment_of(tensor.data_ptr())
    if got != recorded:
        print(f"warning: input {index} is {got}-byte aligned; in the recording it was {recorded}", file=sys.stderr)


SCRIPT_HELPERS: tuple[Any, ...] = (synthesize_storage, pin_range, exact_storage, alignment_of, check_alignment)
"""The functions a repro script may embed; each is self-contained but for those listed before it."""
