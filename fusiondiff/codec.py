"""A fast decoder for capture records, checked against the reference decoder in :mod:`fusiondiff.model`.

The reference decoder (``model._decode_record`` then :func:`fusiondiff.validate.validate_capture`)
reads a type hint for every value and builds a path string (``live.json.fusions[3].kernels[0]...``)
for every element, so that an error can name its field. A capture of 10,000 fusions holds about a
million values: that took 15 s. Here each record class gets a decoder compiled once from its type
hints and :data:`fusiondiff.validate.FIELD_RULES`, which builds the records without any path.

It accepts only what the reference accepts, and builds equal records. Anything it does not accept
at once (a wrong type, a missing field, an impossible value, a shape it was not compiled for) makes
it give up (:class:`_Unsure`), and the reference decoder runs on the same data: every error
message is the reference's, word for word, and the fast path never has to reproduce one.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from collections.abc import Callable
from typing import Any, Literal

from fusiondiff import validate
from fusiondiff.model import SCHEMA_VERSION, Capture, CommunicationKernel, TensorMeta

_INF = math.inf
_NAN = float("nan")


class _Unsure(Exception):
    """The fast decoder does not accept this data as it is: let the reference decoder judge it."""


Decoder = Callable[[Any], Any]


def decode_capture_fast(data: dict[str, Any]) -> Capture:
    """The :class:`Capture` in ``data`` (already checked for its schema version); raises
    :class:`_Unsure` where the reference decoder must decide."""
    return _decoder_for(Capture)(data)


def try_decode_capture(data: Any) -> Capture | None:
    """The capture in ``data``, or ``None`` where only the reference decoder can say what is wrong
    (or, rarely, right) with it."""
    try:
        return decode_capture_fast(data)
    except _Unsure:
        return None
    except (TypeError, ValueError, OverflowError):  # a record refused its values: ask the reference
        return None


@functools.cache
def _decoder_for(hint: Any, rule: Callable[[object], str | None] | None = None) -> Decoder:
    """A decoder for values of ``hint``; ``rule`` (from ``FIELD_RULES``) checks each value (each
    element of a tuple) once decoded."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return _union(args, rule)  # the rule goes to each option: it checks elements, not tuples
    if origin is Literal:
        allowed = args

        def literal(data: Any) -> Any:
            if data not in allowed:
                raise _Unsure
            return data

        return _checked(literal, rule)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _checked(_record(hint), rule)
    if origin is tuple:
        return _tuple(args, rule)
    if origin is dict:
        return _checked(_dict(args), rule)
    if hint is float:
        return _checked(_float, rule)
    if hint is int:
        return _checked(_int, rule)
    if hint is str:
        return _checked(_of_type(str), rule)
    if hint is bool:
        return _checked(_of_type(bool), rule)
    return _give_up  # Any and whatever else: the reference decides


def _give_up(data: Any) -> Any:
    raise _Unsure


def _checked(decode: Decoder, rule: Callable[[object], str | None] | None) -> Decoder:
    if rule is None:
        return decode

    def checked(data: Any) -> Any:
        value = decode(data)
        if rule(value):
            raise _Unsure
        return value

    return checked


def _float(data: Any) -> float:
    kind = type(data)
    if kind is float:
        return data
    if kind is int:
        return float(data)
    if data is None:
        return _NAN
    raise _Unsure


def _int(data: Any) -> int:
    if type(data) is not int or not validate.INT64_MIN <= data <= validate.INT64_MAX:
        raise _Unsure
    return data


def _of_type(kind: type) -> Decoder:
    def decode(data: Any) -> Any:
        if type(data) is not kind:
            raise _Unsure
        return data

    return decode


def _union(args: tuple[Any, ...], rule: Callable[[object], str | None] | None) -> Decoder:
    nullable = type(None) in args and not (rule is not None and rule(None))
    options = [_decoder_for(a, rule) for a in args if a is not type(None)]

    def union(data: Any) -> Any:
        if data is None and nullable:
            return None
        for option in options:
            try:
                return option(data)
            except _Unsure:
                continue
        raise _Unsure

    return union


def _tuple(args: tuple[Any, ...], rule: Callable[[object], str | None] | None) -> Decoder:
    if len(args) == 2 and args[1] is Ellipsis:
        if args[0] is float and rule is validate._duration:
            return _durations
        item = _decoder_for(args[0], rule)

        def many(data: Any) -> tuple[Any, ...]:
            if type(data) is not list:
                raise _Unsure
            return tuple(map(item, data))

        return many
    items = [_decoder_for(a, rule) for a in args]

    def fixed(data: Any) -> tuple[Any, ...]:
        if type(data) is not list or len(data) != len(items):
            raise _Unsure
        return tuple(decode(value) for decode, value in zip(items, data))

    return fixed


def _durations(data: Any) -> tuple[float, ...]:
    """``samples_ns``: the bulk of a capture. Finite, not negative, numbers (not null, not bool)."""
    if type(data) is not list:
        raise _Unsure
    values = tuple(map(_float, data))
    for value in values:
        if not 0.0 <= value < _INF:  # also false for NaN (a null sample)
            raise _Unsure
    return values


def _dict(args: tuple[Any, ...]) -> Decoder:
    value_decoder = _decoder_for(args[1])

    def decode(data: Any) -> dict[Any, Any]:
        if type(data) is not dict:
            raise _Unsure
        return {k: value_decoder(v) for k, v in data.items()}

    return decode


def _record(cls: type) -> Decoder:
    hints = typing.get_type_hints(cls)
    fields = []
    for f in dataclasses.fields(cls):
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        rule = validate.FIELD_RULES.get((cls, f.name))
        fields.append((f.name, _decoder_for(hints[f.name], rule), required))
    check = _across_check if cls in _ACROSS else None

    def decode(data: Any) -> Any:
        if type(data) is not dict:
            raise _Unsure
        kwargs = {}
        for name, decode_field, required in fields:
            if name in data:
                kwargs[name] = decode_field(data[name])
            elif required:
                raise _Unsure
        record = cls(**kwargs)
        if check is not None:
            check(record)
        return record

    return decode


_ACROSS = (TensorMeta, CommunicationKernel)
"""The records :func:`fusiondiff.validate._check_record` has rules across fields for."""


def _across_check(record: Any) -> None:
    """The rules across fields of :func:`fusiondiff.validate._check_record`."""
    try:
        validate._check_record(record, "")
    except validate.CaptureFormatError:
        raise _Unsure from None


# --------------------------------------------------------------------------------------------
# From bytes: msgspec's typed decoder, then the value rules


def decode_capture_bytes(raw: bytes) -> Capture | None:
    """The capture in a file's bytes, decoded by msgspec straight into the records, or ``None``
    wherever the reference path must judge (msgspec missing or refusing the data, no or another
    ``schema_version``, a value the rules refuse, an integer beyond 64 bits, an infinite float).

    msgspec checks the types as it builds the records (strictly: no bool for an int, no float for
    an int, no null for a float) and is about 8x faster than ``json.loads`` and the compiled
    decoder together (benchmarks/bench_codec.py); its messages are not fusiondiff's, which is why
    anything it refuses goes to the reference path.
    """
    decoders = _msgspec_decoders()
    if decoders is None:
        return None
    version_decoder, capture_decoder = decoders
    try:
        # a required schema_version, read first: the record's default must not stand in for it
        version = version_decoder.decode(raw).schema_version
        if not 1 <= version <= SCHEMA_VERSION:
            return None
        capture = capture_decoder.decode(raw)
    except Exception:  # noqa: BLE001 - msgspec's errors (and a RecursionError): the reference decides
        return None
    try:
        _check_values(capture)
    except _Unsure:
        return None
    return capture


@functools.cache
def _msgspec_decoders() -> tuple[Any, Any] | None:
    try:
        import msgspec
    except ImportError:
        return None

    class Versioned(msgspec.Struct):
        schema_version: int

    return msgspec.json.Decoder(Versioned), msgspec.json.Decoder(Capture)


def _check_values(capture: Capture) -> None:
    """What msgspec's types do not say: the rules of :data:`fusiondiff.validate.FIELD_RULES`, the
    cross-field rules of a :class:`TensorMeta`, integers within 64 bits and finite floats. Raises
    :class:`_Unsure` at the first value the reference path must judge."""
    check = _checker_for(Capture)
    assert check is not None
    check(capture)


Checker = Callable[[Any], None]


@functools.cache
def _checker_for(hint: Any, rule: Callable[[object], str | None] | None = None) -> Checker | None:
    """A checker for values of ``hint`` built once, like :func:`_decoder_for`; ``None`` where
    nothing needs checking (text, flags, literals)."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        options = [_checker_for(a, rule) for a in args if a is not type(None)]
        if len(options) != 1:
            return _give_up  # msgspec picked an option by the value's type: let the reference judge
        (option,) = options
        if option is None:
            return None
        return lambda value: None if value is None else option(value)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _record_checker(hint)
    if origin is tuple:
        return _tuple_checker(args, rule)
    if origin is dict:
        values = _checker_for(args[1])
        return None if values is None else _each(values, dict.values)
    if hint is int:
        return _with_rule(_int_in_64_bits, rule)
    if hint is float:
        return _with_rule(_finite_or_nan, rule)
    return None if rule is None else _with_rule(lambda value: None, rule)


def _int_in_64_bits(value: int) -> None:
    if not validate.INT64_MIN <= value <= validate.INT64_MAX:
        raise _Unsure


def _finite_or_nan(value: float) -> None:
    if value == _INF or value == -_INF:
        raise _Unsure


def _with_rule(check: Checker, rule: Callable[[object], str | None] | None) -> Checker:
    if rule is None:
        return check

    def checked(value: Any) -> None:
        check(value)
        if rule(value):
            raise _Unsure

    return checked


def _tuple_checker(args: tuple[Any, ...], rule: Callable[[object], str | None] | None) -> Checker | None:
    if len(args) == 2 and args[1] is Ellipsis:
        if args[0] is float and rule is validate._duration:
            return _check_durations
        if args[0] is int and rule in (None, validate._count, validate._positive):
            low = {None: validate.INT64_MIN, validate._count: 0, validate._positive: 1}[rule]
            return lambda value: _ints_within(value, low)
        item = _checker_for(args[0], rule)
        return None if item is None else _each(item, iter)
    items = [_checker_for(a, rule) for a in args]
    if not any(items):
        return None

    def fixed(value: tuple[Any, ...]) -> None:
        for check, v in zip(items, value):
            if check is not None:
                check(v)

    return fixed


def _each(check: Checker, elements: Callable[[Any], Any]) -> Checker:
    def each(value: Any) -> None:
        for element in elements(value):
            check(element)

    return each


def _ints_within(values: tuple[int, ...], low: int) -> None:
    """A tuple of counts (shape, stride, grid...), read in C: every value within ``low`` and 2**63."""
    if values and not (min(values) >= low and max(values) <= validate.INT64_MAX):
        raise _Unsure


def _check_durations(values: tuple[float, ...]) -> None:
    """``samples_ns``, the bulk of a capture: every value finite and not negative, read in C."""
    # min and max would let a NaN through, but none reaches here: msgspec refuses JSON null for a
    # float, and JSON has no NaN (the compiled decoder's _durations, which reads null, checks each)
    if values and not (min(values) >= 0.0 and max(values) < _INF):
        raise _Unsure


def _record_checker(cls: type) -> Checker | None:
    hints = typing.get_type_hints(cls)
    fields = []
    for f in dataclasses.fields(cls):
        check = _checker_for(hints[f.name], validate.FIELD_RULES.get((cls, f.name)))
        if check is not None:
            fields.append((f.name, check))
    across = _across_check if cls in _ACROSS else None

    def check_record(record: Any) -> None:
        for name, check in fields:
            check(getattr(record, name))
        if across is not None:
            across(record)

    return check_record
