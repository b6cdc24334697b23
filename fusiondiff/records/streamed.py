"""A record encoded as JSON in pieces: the very bytes ``msgspec.json.encode`` writes for it, made
one part at a time, so that a report of a whole session is written as it is made and never held
whole in memory (a fusion of 100,000 kernels encodes to a hundred megabytes at once otherwise).

A record's field holding records (a capture's fusions, a fusion's kernels, a diff's pairs) is
encoded item by item; a record holding none, or few (:data:`WHOLE_RECORDS`), is encoded whole by
msgspec, which fixes the field order and the value rules (NaN as null, a tuple as a list) in one
place. Where the pieces are cut changes no byte: it bounds what is held at once, and a record of a
few records in one call spares the tens of thousands of small calls of a whole session.
"""

from __future__ import annotations

import copy
import dataclasses
import types
import typing
from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

CHUNK_BYTES = 1 << 20
"""Bytes :func:`batched` gathers before it hands a piece on (one write call per piece)."""
WHOLE_RECORDS = 64
"""Records a record may hold (in its lists, at any depth) and still be encoded in one piece."""
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
        and hasattr(type(value[0]), _FIELDS)
        and not isinstance(value[0], type)
    )


_FIELDS = "__dataclass_fields__"
"""What marks a dataclass (as :func:`dataclasses.is_dataclass` reads it, without its two calls)."""


_LIST_FIELDS: dict[type, tuple[str, ...]] = {}
"""Per record type, the fields whose annotation admits a list of records (:func:`_list_fields`)."""
_SCALARS = (str, int, float, bool, bytes, type(None))


def _list_fields(kind: type) -> tuple[str, ...]:
    """The fields of the dataclass ``kind`` that may hold a list of records, by their annotations;
    every field where the annotations cannot be read; none for a type that is no dataclass.
    Computed once per type: a session's record is tens of thousands of records of a dozen types."""
    found = _LIST_FIELDS.get(kind)
    if found is None:
        if not hasattr(kind, _FIELDS):
            _LIST_FIELDS[kind] = ()
            return ()
        names = [f.name for f in dataclasses.fields(kind)]
        try:
            hints = typing.get_type_hints(kind)
        except Exception:  # an annotation that does not resolve: every field may hold records
            found = tuple(names)
        else:
            found = tuple(name for name in names if _may_list_records(hints.get(name, Any)))
        _LIST_FIELDS[kind] = found
    return found


def _may_list_records(hint: Any) -> bool:
    """Whether a value of annotation ``hint`` may be a tuple or list of records."""
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        return any(_may_list_records(arg) for arg in typing.get_args(hint))
    if origin in (tuple, list) or (isinstance(origin, type) and issubclass(origin, Iterable)):
        items = [arg for arg in typing.get_args(hint) if arg is not Ellipsis]
        return not items or any(_may_be_record(arg) for arg in items)
    if origin is typing.Literal or hint in _SCALARS:
        return False
    if isinstance(hint, type):  # a tuple or list type of its own may hold anything; a record is no list
        return issubclass(hint, (tuple, list)) or not (dataclasses.is_dataclass(hint) or issubclass(hint, dict))
    return True  # Any, a type variable, anything else


def _may_be_record(hint: Any) -> bool:
    """Whether a value of annotation ``hint`` may be a record (a dataclass instance)."""
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        return any(_may_be_record(arg) for arg in typing.get_args(hint))
    if origin is typing.Literal or hint in _SCALARS or origin is not None:
        return False  # a scalar, or a generic container: no dataclass
    return True  # a record, Any, another class (a subclass may be a dataclass)


def _held(value: Any, budget: int) -> int:
    """How many records ``value``'s lists hold at any depth, counted until past ``budget``."""
    count = 0
    for name in _list_fields(type(value)):
        items = getattr(value, name)
        if _records(items):
            count += len(items)
            if not any(map(_list_fields, set(map(type, items)))):
                continue  # records that hold no lists (a fusion's inputs, its kernels): counted
            for item in items:
                if count > budget:
                    return count
                count += _held(item, budget - count)
    return count


def _whole(value: Any) -> bool:
    """Whether ``value`` is encoded in one piece: its lists hold at most :data:`WHOLE_RECORDS`
    records, or it holds no list of records (or is no record)."""
    return not _list_fields(type(value)) or _held(value, WHOLE_RECORDS) <= WHOLE_RECORDS


def encode_chunks(value: Any) -> Iterator[bytes]:
    """``msgspec.json.encode(value)``'s bytes, in pieces that join to exactly them."""
    if _whole(value):
        yield msgspec.json.encode(value)
        return
    spliced = [name for name in _list_fields(type(value)) if _records(getattr(value, name))]
    text = msgspec.json.encode(shell(value, **{name: _MARK.format(i) for i, name in enumerate(spliced)}))
    for i, name in enumerate(spliced):
        head, text = text.split(msgspec.json.encode(_MARK.format(i)), 1)
        yield head + b"["
        for j, item in enumerate(getattr(value, name)):
            if j:
                yield b","
            if _whole(item):  # the common case, without a generator per item
                yield msgspec.json.encode(item)
            else:
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
