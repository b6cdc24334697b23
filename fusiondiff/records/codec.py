"""Reading records back from JSON: one decoder, msgspec's, with the value rules on the fields.

msgspec builds the records straight from a file's bytes (or from data already parsed), checking
each field's type and the bounds of its rule (:mod:`fusiondiff.records.constraints`) as it goes, and the
rules across a record's fields in the record's ``__post_init__``. What it refuses is named by
:func:`refusal`, the one error-path formatter: the field's path from msgspec, in fusiondiff's
style (``live.json.fusions[0].timing.samples_ns[3]``), and the words of the rule that value breaks
(``-1.0 is not a duration``), read from the same declarations msgspec enforced.

A file that is not JSON, holds numbers no capture field can hold, or is not a capture of a
version this fusiondiff reads is named first, from ``json.loads`` with fusiondiff's number
checks (:mod:`fusiondiff.io.store`): only then is a field named.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

import msgspec

from fusiondiff.records.constraints import INT64_MAX, INT64_MIN, NaNFloat, Rule, read_nan_float
from fusiondiff.records.errors import CaptureFormatError
from fusiondiff.records.model import SCHEMA_VERSION, Capture, Timing

T = TypeVar("T")


def _hook(kind: type, value: Any) -> Any:
    if kind is NaNFloat:
        return read_nan_float(value)
    raise NotImplementedError(f"no decoder for {kind!r}")


@functools.cache
def _json_decoder(kind: Any) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(kind, dec_hook=_hook)


def decode_capture_bytes(raw: bytes) -> Capture | None:
    """The capture in a file's bytes, or None where msgspec refuses them or the file holds no
    ``schema_version`` of one this fusiondiff reads: the caller then finds out what is wrong,
    beginning with the JSON itself (see :func:`fusiondiff.io.store.load_capture`)."""
    try:
        capture: Capture = _json_decoder(Capture).decode(raw)
    except (msgspec.MsgspecError, RecursionError):
        return None
    # Read in the same pass as the rest: msgspec sets on the record the fields the text holds and
    # leaves a default to the class, so the record's default does not stand in for a file that has none.
    if "schema_version" not in vars(capture) or not 1 <= capture.schema_version <= SCHEMA_VERSION:
        return None
    return capture


def check_schema_version(data: Any, origin: str) -> None:
    """Refuse parsed JSON that is not a capture of a version this fusiondiff reads."""
    if not isinstance(data, dict) or "schema_version" not in data:
        raise CaptureFormatError(f"{origin} is not a fusiondiff capture (no schema_version)")
    version = data["schema_version"]
    if not isinstance(version, int) or isinstance(version, bool):
        raise CaptureFormatError(f"{origin}: schema_version {version!r} is not an integer")
    if version > SCHEMA_VERSION:
        raise CaptureFormatError(
            f"{origin} was written with capture schema {version}; this fusiondiff reads up to "
            f"{SCHEMA_VERSION}: upgrade fusiondiff"
        )
    if version < 1:
        raise CaptureFormatError(f"{origin}: schema_version {version} is not a known version")


def capture_from_jsonable(data: Any, origin: str = "capture") -> Capture:
    """A :class:`Capture` from parsed JSON, with a clear error for foreign or newer files."""
    check_schema_version(data, origin)
    return decode(data, Capture, origin)


def decode(data: Any, kind: type[T], origin: str) -> T:
    """A record of ``kind`` from parsed JSON (:func:`fusiondiff.records.codec.to_jsonable`'s form), or a
    :class:`CaptureFormatError` naming the field that is wrong, under ``origin``."""
    try:
        return msgspec.convert(data, kind, dec_hook=_hook)
    except msgspec.ValidationError as exc:
        raise CaptureFormatError(refusal(exc, data, kind, origin)) from None


# --------------------------------------------------------------------------------------------
# The error-path formatter

_AT = re.compile(r" - at `\$(?P<path>.*)`$")
_STEP = re.compile(r"\.(?P<name>\w+)|\[(?P<index>\d+)\]|\[(?P<key>\.\.\.)\]")


def refusal(error: msgspec.ValidationError, data: Any, kind: type, origin: str) -> str:
    """One line naming what ``error`` (msgspec's, decoding ``data`` as ``kind``) refused: the path
    under ``origin``, then why, in the words of the field's declaration.

    msgspec gives the path (``$.fusions[0].inputs[1]``; a mapping's key as ``[...]``); the value
    found there is judged against the field's type and rule (:func:`_problem`). Where they find
    nothing wrong, a record's ``__post_init__`` refused it (a rule across its fields), and the
    reason is the one it gave."""
    message = str(error)
    match = _AT.search(message)
    path, reason = (match["path"], message[: match.start()]) if match else ("", message)
    try:
        return _judged(path, reason, data, kind, origin)
    except (KeyError, IndexError, TypeError, AttributeError):  # a path the declarations do not follow
        return f"{origin}{path}: {reason}"


def _judged(path: str, reason: str, data: Any, kind: type, origin: str) -> str:
    where, hint, value = origin, kind, data
    for step in _STEP.finditer(path):
        base = _declared(_narrowed(hint, value)).base
        if step["name"] is not None:
            where += f".{step['name']}"
            hint = _hints(base)[step["name"]]
            value = value.get(step["name"]) if isinstance(value, dict) else None
        elif step["index"] is not None:
            i = int(step["index"])
            where += f"[{i}]"
            items = typing.get_args(base)
            hint = items[0] if len(items) == 2 and items[1] is Ellipsis else items[i]
            value = value[i] if isinstance(value, list) and i < len(value) else None
        else:  # a mapping's value: the first one its declaration refuses
            hint = typing.get_args(base)[1]
            key = next((k for k, v in value.items() if _problem(hint, v)), None) if isinstance(value, dict) else None
            # a key from the file is quoted unless it is a plain name: it may hold a line break
            where += "[...]" if key is None else f".{key}" if key.isidentifier() else f"[{key!r}]"
            value = None if key is None else value[key]
    return f"{where}: {_problem(hint, value) or reason}"


@functools.cache
def _hints(record: type) -> dict[str, Any]:
    return typing.get_type_hints(record, include_extras=True)


@dataclasses.dataclass(frozen=True)
class _Declaration:
    """A field's type as declared: the type under its ``Annotated``, its bounds and its rule."""

    base: Any
    bounds: msgspec.Meta | None = None
    rule: Rule | None = None


def _declared(hint: Any) -> _Declaration:
    if typing.get_origin(hint) is not Annotated:
        return _Declaration(hint)
    base, *extras = typing.get_args(hint)
    bounds = next((e for e in extras if isinstance(e, msgspec.Meta)), None)
    return _Declaration(base, bounds, next((e for e in extras if isinstance(e, Rule)), None))


def _options(hint: Any) -> tuple[Any, ...] | None:
    """The types of a union (``X | None``), or None for another type."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return typing.get_args(hint)
    return None


def _narrowed(hint: Any, value: Any) -> Any:
    """The option of a union that ``value`` is read as (msgspec picks it by the JSON type)."""
    options = _options(hint)
    if options is None:
        return hint
    present = [o for o in options if o is not type(None)]
    return next((o for o in present if _problem(o, value) is None), present[0])


def _problem(hint: Any, value: Any) -> str | None:
    """What is wrong with ``value`` as a value of ``hint`` at its own level (not inside it), in
    the decoder's words; None when nothing is."""
    options = _options(hint)
    if options is not None:
        if value is None and type(None) in options:
            return None
        problems = [_problem(o, value) for o in options if o is not type(None)]
        return None if None in problems else problems[0]
    declared = _declared(hint)
    base = declared.base
    origin = typing.get_origin(base)
    if base is Any:
        return None
    if origin is Literal:
        allowed = typing.get_args(base)
        return None if value in allowed else f"{value!r} is not one of {list(allowed)}"
    if dataclasses.is_dataclass(base):
        if not isinstance(value, dict):
            return f"expected an object, found {type(value).__name__}"
        required = (f.name for f in dataclasses.fields(base) if _required(f))
        return next((f"missing field '{name}'" for name in required if name not in value), None)
    if origin is tuple:
        if not isinstance(value, list):
            return f"expected a list, found {type(value).__name__}"
        items = typing.get_args(base)
        if not (len(items) == 2 and items[1] is Ellipsis) and len(items) != len(value):
            return f"expected {len(items)} items, found {len(value)}"
        return None
    if origin is dict:
        return None if isinstance(value, dict) else f"expected an object, found {type(value).__name__}"
    return _number_problem(declared, value)


def _required(f: dataclasses.Field[Any]) -> bool:
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


_FLOATS = (float, NaNFloat)
_ACCEPTS: dict[Any, tuple[str, Callable[[Any], bool]]] = {
    int: ("int", lambda v: type(v) is int),
    float: ("float", lambda v: type(v) in (int, float) or v is None),  # null: NaN, for the rule to judge
    NaNFloat: ("float", lambda v: type(v) in (int, float) or v is None),
    str: ("str", lambda v: type(v) is str),
    bool: ("bool", lambda v: type(v) is bool),
}


def _number_problem(declared: _Declaration, value: Any) -> str | None:
    """A scalar's type, then its bounds: words of its rule below them, else 64 bits for an integer."""
    name, accepts = _ACCEPTS.get(declared.base, (str(declared.base), lambda v: True))
    if not accepts(value):
        return f"expected {name}, found {value!r:.60}"
    if declared.base in _FLOATS and type(value) is int:
        value = float(value)  # as the decoder reads it
    rule, bounds = declared.rule, declared.bounds
    if value is None:  # a float field's null
        if rule is not None:
            return rule.refusal(None)
        return None if declared.base is NaNFloat else f"expected float, found {value!r}"
    if bounds is None or type(value) not in (int, float):
        return None
    low = bounds.ge is None or value >= bounds.ge
    high = bounds.le is None or value <= bounds.le
    if not low and rule is not None:
        return rule.refusal(value)
    if type(value) is int and not INT64_MIN <= value <= INT64_MAX:
        return f"{value} does not fit in 64 bits"
    if not (low and high):
        return rule.refusal(value, above=not high) if rule is not None else f"{value!r} is out of range"
    return None


# Records to plain data (what :func:`decode` reads back), by their fields so none is forgotten.


def plain_data(value: Any) -> Any:
    """A record as the data msgspec's JSON encoder writes (dicts, lists and tuples, strings and
    numbers; a field left out where it holds its default; NaN and infinity, which the encoder
    writes as null). Unlike :func:`to_jsonable`, timings get no derived statistics (they are their
    samples again), and it runs at C speed (a capture of 10,000 fusions in a fraction of a
    second): for records written with ``msgspec.json.encode`` for programs to read back."""
    return msgspec.to_builtins(value)


_PLAIN = frozenset({str, int, bool, type(None)})
"""Types written as they are (checked by exact type first: a diff of 100,000 kernels is millions of values)."""


@functools.cache
def _field_names(cls: Any) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


def to_jsonable(value: Any) -> Any:
    """Turn a record into JSON-ready data. Timings also get their derived statistics."""
    kind: Any = type(value)
    if kind in _PLAIN:
        return value
    if kind is tuple or kind is list:
        return [to_jsonable(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {name: to_jsonable(getattr(value, name)) for name in _field_names(kind)}
        if isinstance(value, Timing):
            out["summary"] = to_jsonable(value.summary())
        return out
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, float) and value != value:  # NaN is not JSON
        return None
    return value
