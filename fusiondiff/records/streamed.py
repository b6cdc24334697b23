"""A record encoded as JSON in pieces: the very bytes ``msgspec.json.encode`` writes for it, made
one part at a time, so that a report of a whole session is written as it is made and never held
whole in memory (a fusion of 100,000 kernels encodes to a hundred megabytes at once otherwise).

A record's field holding records (a capture's fusions, a fusion's kernels, a diff's pairs) is
encoded item by item; a record holding none is encoded whole by msgspec, which fixes the field order and
the value rules (NaN as null, a tuple as a list) in one place.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

CHUNK_BYTES = 1 << 20
"""Bytes :func:`batched` gathers before it hands a piece on (one write call per piece)."""
_MARK = "\x00fusiondiff splice {}\x00"
"""Stands for a field encoded item by item while the rest of its record is encoded; no recorded
text holds a NUL."""


def shell(record: Any, **fields: Any) -> Any:
    """A shallow copy of the frozen dataclass ``record`` with ``fields`` set, its checks
    (``__post_init__``) not run: a stand-in to encode or compare, never a record to use."""
    out = copy.copy(record)
    for name, value in fields.items():
        object.__setattr__(out, name, value)
    return out


def _records(value: Any) -> bool:
    """Whether ``value`` is a list of records (its first item tells)."""
    return (
        isinstance(value, (tuple, list))
        and len(value) > 0
        and dataclasses.is_dataclass(value[0])
        and not isinstance(value[0], type)
    )


def encode_chunks(value: Any) -> Iterator[bytes]:
    """``msgspec.json.encode(value)``'s bytes, in pieces that join to exactly them."""
    if not (dataclasses.is_dataclass(value) and not isinstance(value, type)):
        yield msgspec.json.encode(value)
        return
    spliced = [f.name for f in dataclasses.fields(value) if _records(getattr(value, f.name))]
    if not spliced:
        yield msgspec.json.encode(value)
        return
    text = msgspec.json.encode(shell(value, **{name: _MARK.format(i) for i, name in enumerate(spliced)}))
    for i, name in enumerate(spliced):
        head, text = text.split(msgspec.json.encode(_MARK.format(i)), 1)
        yield head + b"["
        for j, item in enumerate(getattr(value, name)):
            if j:
                yield b","
            yield from encode_chunks(item)
        yield b"]"
    yield text


def batched(chunks: Iterable[bytes], size: int = CHUNK_BYTES) -> Iterator[bytes]:
    """``chunks`` gathered into pieces of about ``size`` bytes (the last may be smaller)."""
    pending: list[bytes] = []
    held = 0
    for chunk in chunks:
        pending.append(chunk)
        held += len(chunk)
        if held >= size:
            yield b"".join(pending)
            pending, held = [], 0
    if pending:
        yield b"".join(pending)
