"""The words for the findings about a fusion's inputs (:mod:`fusiondiff.diff.rules_inputs`) and
about a failed execution (:mod:`fusiondiff.diff.rules_failure`): a title and evidence lines from
each finding's data."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fusiondiff.diff.records import Evidence, Finding
from fusiondiff.report.words.shown import by_field, items, label, on_side, show

Words = tuple[str, list[str]]

_OFFSET_NOTE = "nvFuser's own repro script builds fresh tensors at offset 0: the offset is lost there"
_STRIDES_NOTE = "strides decide the stride order nvFuser schedules for, and whether loads coalesce"
_DTYPE_NOTE = "sizes and dtypes select the scheduler heuristics, the index type and the kernel"
_RANGE_NOTE = "index values decide which rows a gather touches (cache reuse, memory traffic)"
_INT32_NOTE = "one side holds values beyond int32: 64-bit index arithmetic"
_GATHER_NOTE = (
    "an out-of-bounds gather reads past the table: CUDA's illegal address. Replay with the "
    "live inputs (`fusiondiff replay SCRIPT --inputs LIVE.json`) or a repro written by "
    "`fusiondiff repro`, which keeps the recorded index range"
)


def _describe(e: Evidence | None) -> str:
    """What an input is (the ``input`` evidence): ``float32[1024, 4096]``, ``scalar int``, ``absent``."""
    meta = None if e is None else on_side(e)
    if not isinstance(meta, (list, tuple)) or len(meta) != 3:
        return "absent"
    kind, dtype, shape = meta
    if kind == "scalar":
        return f"scalar {dtype}"
    return f"{str(dtype).removeprefix('torch.')}{list(shape)}"


def _index(f: Finding) -> int:
    return next((e.index for e in f.data if e.index is not None), 0)


def _width(value: object) -> str:
    return "unknown" if value is None else f"{show(value)} element(s)"


def _alignment_lines(e: dict[str, Evidence]) -> list[str]:
    alignment, width = e["alignment_bytes"], e["widest_vector"]
    lines = [
        f"data pointer alignment: {show(alignment.a)} B in A, {show(alignment.b)} B in B "
        f"(widest vector access: {_width(width.a)} in A, {_width(width.b)} in B)"
    ]
    if "narrow_vectors" in e:
        vector = show(e["narrow_vectors"].a)
        lines.append(
            f"below {vector} B nvFuser cannot use its widest vector loads for this input, and "
            f"the alignment is part of its input cache key: another kernel variant follows"
        )
    return lines


def _storage_offset(f: Finding) -> Words:
    e, index = by_field(f.data), _index(f)
    offset = e["storage_offset"]
    lines = [
        f"input {index} ({_describe(e.get('input'))}): storage offset {show(offset.a)} element(s) in A, "
        f"{show(offset.b)} in B",
        _OFFSET_NOTE,
    ]
    extra = ""
    if "alignment_bytes" in e:
        lines[1:1] = _alignment_lines(e)
        extra = f" (alignment {show(e['alignment_bytes'].a)} B vs {show(e['alignment_bytes'].b)} B)"
    return f"Input {index} of {label(f.fusions)} starts at another storage offset{extra}", lines


def _input_alignment(f: Finding) -> Words:
    e, index = by_field(f.data), _index(f)
    alignment = e["alignment_bytes"]
    lines = [f"input {index} ({_describe(e.get('input'))})", *_alignment_lines(e)]
    title = f"Input {index} of {label(f.fusions)} is aligned to {show(alignment.a)} B in A, {show(alignment.b)} B in B"
    return title, lines


def _input_strides(f: Finding) -> Words:
    e, index = by_field(f.data), _index(f)
    lines = [f"input {index} ({_describe(e.get('input'))})"]
    lines += [f"{x.field}: {show(x.a)} in A, {show(x.b)} in B" for x in f.data if x.field != "input"]
    lines.append(_STRIDES_NOTE)
    return f"Input {index} of {label(f.fusions)} has another memory layout (strides)", lines


def _dtype_shape(f: Finding) -> Words:
    lines = [
        f"input {x.index} exists only in {'A' if x.b is None else 'B'}"
        if x.field == "input"
        else f"input {x.index} {x.field}: {show(x.a)} in A, {show(x.b)} in B"
        for x in f.data
    ]
    return f"Inputs of {label(f.fusions)} differ in dtype, shape or count", [*lines, _DTYPE_NOTE]


def _index_value_range(f: Finding) -> Words:
    e, index = by_field(f.data), _index(f)
    low, high = e["min_value"], e["max_value"]
    lines = [
        f"input {index} ({_describe(e.get('input'))}): values [{show(low.a)}, {show(high.a)}] in A, "
        f"[{show(low.b)}, {show(high.b)}] in B",
        _RANGE_NOTE,
    ]
    if "beyond_int32" in e:
        lines.append(_INT32_NOTE)
    return f"Index input {index} of {label(f.fusions)} holds another range of values", lines


def _scalar_value(f: Finding) -> Words:
    e, index = by_field(f.data), _index(f)
    value = e["scalar_value"]
    lines = [f"input {index} ({_describe(e.get('input'))}): {show(value.a)} in A, {show(value.b)} in B"]
    return f"Scalar input {index} of {label(f.fusions)} has another value", lines


def _failed_side(f: Finding) -> tuple[str, str]:
    side = str(by_field(f.data)["failed_side"].a)
    return side, "B" if side == "A" else "A"


def _int(value: object) -> str:
    return "?" if not isinstance(value, (int, float)) else str(int(value))


def _parts(value: object, n: int) -> tuple[Any, ...]:
    """The first ``n`` items of a tuple of evidence, ``None`` for those it lacks."""
    first = items(value)[:n]
    return (*first, *(None,) * (n - len(first)))


def _index_out_of_range(f: Finding) -> Words:
    side, other = _failed_side(f)
    lines = []
    ranges = [e for e in f.data if e.field == "index_range"]
    tables = [e for e in f.data if e.field == "table"]
    for held, table in zip(ranges, tables):
        low, high = _parts(held.a if side == "A" else held.b, 2)
        table_input, dim, rows = _parts(on_side(table), 3)
        bound = f"[0, {rows})" if rows is not None else "[0, rows)"
        what = f"dim {dim} of input {table_input} ({rows} rows)" if rows is not None else "its table"
        lines.append(
            f"{side}'s index input {held.index} of {held.subject} holds [{_int(low)}, {_int(high)}], "
            f"outside {bound} of {what}"
        )
        peer = held.b if side == "A" else held.a
        if peer is not None:
            peer_low, peer_high = _parts(peer, 2)
            lines.append(f"{other} held [{_int(peer_low)}, {_int(peer_high)}] there")
    lines.append(_GATHER_NOTE)
    return f"{label(f.fusions)}: {side}'s index values fall outside the table they index", lines


def _view_past_storage(f: Finding) -> Words:
    side, _ = _failed_side(f)
    views = [e for e in f.data if e.field == "view"]
    reaches = [e for e in f.data if e.field == "reach"]
    lines = []
    for view, reach in zip(views, reaches):
        dtype, shape, stride, offset = _parts(on_side(view), 4)
        last, numel = _parts(on_side(reach), 2)
        lines.append(
            f"{side}'s input {view.index} ({dtype} {list(shape or ())} stride {list(stride or ())}, "
            f"offset {offset}) reaches element {last} of a storage of {numel}"
        )
    return f"{label(f.fusions)}: a view of {side} reaches past its storage", lines


def _failed_execution(f: Finding) -> Words:
    side, _ = _failed_side(f)
    e = by_field(f.data)
    lines = [f"{str(on_side(e['failure_kind'])).replace('_', ' ')}: {on_side(e['failure_message'])}"]
    if "log_file" in e:
        lines.append(f"full output (C++ stack) in {on_side(e['log_file'])}, beside {side}'s capture")
    if "differing_inputs" in e:
        lines.append(f"inputs that differ between the sides: {show(list(items(e['differing_inputs'].a)[:8]))}")
    lines.append(f"{side} recorded its inputs but has no kernels or samples for this fusion")
    return f"{label(f.fusions)} failed in {side}", lines


WORDS: dict[str, Callable[[Finding], Words]] = {
    "storage_offset": _storage_offset,
    "input_alignment": _input_alignment,
    "input_strides": _input_strides,
    "dtype_shape": _dtype_shape,
    "index_value_range": _index_value_range,
    "scalar_value": _scalar_value,
    "index_out_of_range": _index_out_of_range,
    "view_past_storage": _view_past_storage,
    "failed_execution": _failed_execution,
}
"""Each rule's words: its finding's title and evidence lines."""
