"""What a capture's saved inputs file holds, read before a repro script is made to rely on it.

A repro of a capture taken with ``--save-inputs`` loads each input's storage from the
safetensors file beside the capture. That file travels with the capture and may be damaged, cut
short, of another capture, or missing some keys; the script would then fail when run, far from
the cause. So :func:`usable_saved_inputs` reads the file's header (a length and a JSON table of
names, dtypes, shapes and byte ranges; no torch, nothing executed) and keeps only the inputs whose
tensor is there and large enough for the input's view; every other input is synthesized, and a
note says which and why, as for a missing file.
"""

from __future__ import annotations

import json
import os
import stat
import struct
from collections.abc import Iterable
from pathlib import Path

from fusiondiff.records.dtypes import itemsize_bytes
from fusiondiff.records.model import FusionRecord, view_extent

MAX_HEADER_BYTES = 100 * 2**20
"""Largest header the safetensors format allows."""


def saved_tensor_bytes(path: Path) -> dict[str, int]:
    """Bytes of each tensor in a safetensors file, from its header; :class:`ValueError` with the
    reason for a file that is not one."""
    try:
        # without blocking, and a regular file only: a FIFO named like the inputs file waited forever
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            raise ValueError("it is not a regular file (a FIFO, device or folder)")
        size = info.st_size
        with os.fdopen(fd, "rb") as file:
            prefix = file.read(8)
            if len(prefix) < 8:
                raise ValueError("shorter than a safetensors header")
            (length,) = struct.unpack("<Q", prefix)
            if length > MAX_HEADER_BYTES or 8 + length > size:
                raise ValueError(f"its header claims {length} bytes")
            header = json.loads(file.read(length))
    except OSError as exc:
        raise ValueError(exc.strerror or str(exc)) from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise ValueError("its header is not JSON") from None
    if not isinstance(header, dict):
        raise ValueError("its header is not a table of tensors")
    found = {}
    for key, entry in header.items():
        if key == "__metadata__":
            continue
        offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
        if not (
            isinstance(offsets, list)
            and len(offsets) == 2
            and all(type(v) is int for v in offsets)
            and 0 <= offsets[0] <= offsets[1] <= size - 8 - length
        ):
            raise ValueError(f"tensor {key!r:.40} has no byte range inside the file")
        found[key] = offsets[1] - offsets[0]
    return found


def usable_saved_inputs(path: Path, fusions: Iterable[FusionRecord]) -> tuple[frozenset[str] | None, list[str]]:
    """The tensor keys of ``fusions``' inputs that ``path`` can give (``None``: the file cannot be
    used at all), and one note for each reason an input will be synthesized instead."""
    fusions = list(fusions)
    keyed = [(f, m) for f in fusions for m in f.inputs if m.kind == "tensor" and m.tensor_key is not None]
    try:
        saved = saved_tensor_bytes(path)
    except ValueError as reason:
        return None, [f"{path.name} is not a safetensors file ({reason}): the inputs are synthesized"]
    if not keyed:
        return frozenset(), [
            f"{path.name} is beside the capture, but no input of the fusions written names a tensor saved in it: "
            "the inputs are synthesized"
        ]
    usable, notes = set(), []
    for fusion, meta in keyed:
        key = str(meta.tensor_key)
        itemsize = itemsize_bytes(meta.dtype) or 1
        needed = view_extent(meta) * itemsize
        if key not in saved:
            notes.append(f"{fusion.key} input {meta.index}: {path.name} has no tensor {key!r}: it is synthesized")
        elif saved[key] < needed or saved[key] % itemsize:
            notes.append(
                f"{fusion.key} input {meta.index}: the saved tensor {key!r} holds {saved[key]} bytes, its view "
                f"reaches {needed}: it is synthesized"
            )
        else:
            usable.add(key)
    return frozenset(usable), notes
