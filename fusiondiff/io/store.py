"""Reading and writing capture files: JSON for the records, safetensors for exact tensors.

Writes are atomic (:func:`fusiondiff.io.files.atomic_write`: a temporary file renamed into place),
so an interrupted capture never leaves a half-written file, and an existing file is only replaced
by a complete one.

Captures travel, so reading one is bounded: at most :data:`MAX_CAPTURE_BYTES` are read, only from
a regular file (never a FIFO or a device that does not end), and numbers that do not fit what a
capture holds, or JSON nested deeper than the decoder's recursion limit, are one-line
:class:`CaptureFormatError` rather than a crash.

A gzipped file (``live.json.gz``, told by its first bytes) is read through the same reader, and the
bound holds for what it decompresses to as well, whatever its trailer claims: a gzip bomb is one
line. A text written to a path ending in ``.gz`` is gzipped (:func:`fusiondiff.io.files.write_text`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import stat
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fusiondiff.io.files import GZIP_SUFFIX, atomic_write, check_place, write_text
from fusiondiff.records import limits
from fusiondiff.records.codec import check_schema_version, decode, decode_capture_bytes, to_jsonable
from fusiondiff.records.collector import collector_paused
from fusiondiff.records.errors import CaptureFormatError, FusionDiffError
from fusiondiff.records.model import Capture

MAX_CAPTURE_BYTES = limits.CAPTURE_BYTES
"""Capture files larger than this (512 MiB) are refused: a capture of thousands of fusions with
their CUDA sources is tens of MiB."""
MAX_INTEGER_DIGITS = limits.INTEGER_DIGITS
"""Longer integers are refused while decoding: nothing a capture records needs more than 20."""

if TYPE_CHECKING:  # torch is only needed where tensors are saved or loaded
    import torch


_GZIP_MAGIC = b"\x1f\x8b"


def tensors_path_for(json_path: str | os.PathLike[str]) -> Path:
    """The safetensors file that goes with a capture's JSON file (``live.json`` or ``live.json.gz``:
    ``live.tensors.safetensors``)."""
    path = Path(json_path)
    stem = Path(path.name.removesuffix(GZIP_SUFFIX)).stem
    return path.with_name(stem + ".tensors.safetensors")


def dumps_capture(capture: Capture) -> str:
    """The JSON text of a capture (stable key order, so files diff well)."""
    return json.dumps(to_jsonable(capture), indent=1, sort_keys=False) + "\n"


def save_capture(
    capture: Capture,
    path: str | os.PathLike[str],
    tensors: dict[str, torch.Tensor] | None = None,
    timelines: dict[str, Any] | None = None,
    *,
    devices: bool = True,
) -> Path:
    """Write ``capture`` to ``path`` (and its tensors and timelines next to it). Returns the JSON path."""
    write_capture(capture, path, tensors, timelines, devices=devices)
    return Path(path)


def write_capture(
    capture: Capture,
    path: str | os.PathLike[str],
    tensors: dict[str, torch.Tensor] | None = None,
    timelines: dict[str, Any] | None = None,
    *,
    devices: bool = True,
) -> Capture:
    """Write ``capture`` to ``path`` and its tensors next to it; returns the capture as written,
    its ``tensors_file`` naming the tensors' file when there are any. ``timelines``: the CTA
    arrays of the records' ``sm_timeline`` (:mod:`fusiondiff.io.timelines`), written beside it too.
    Nothing is written through a link, and each of the files' places is checked before any is
    written; ``devices`` false: not to a device or FIFO at ``path`` either
    (:func:`fusiondiff.io.files.atomic_write`)."""
    if not isinstance(capture, Capture):
        raise FusionDiffError(f"save_capture takes a Capture, not {type(capture).__name__}")
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise FusionDiffError(f"save_capture takes a file path, not {type(path).__name__} {str(path)[:60]!r}")
    path = Path(path)
    check_place(path, devices=devices)
    if tensors:
        check_place(tensors_path_for(path), devices=False)
    if timelines:
        from fusiondiff.io.timelines import attach_file, timeline_path_for

        check_place(timeline_path_for(path), devices=False)

        capture = attach_file(capture, path, timelines)
    if tensors:
        from safetensors.torch import save_file

        tpath = tensors_path_for(path)
        atomic_write(tpath, lambda tmp: save_file(tensors, tmp))
        capture = dataclasses.replace(capture, tensors_file=tpath.name)
    write_text(path, dumps_capture(capture), devices=devices)
    return capture


def load_capture(path: str | os.PathLike[str]) -> Capture:
    """Read a capture file, with a one-line error for a missing, unreadable, foreign, newer,
    damaged or impossible one (the rules on the records' fields: :mod:`fusiondiff.records.constraints`)."""
    path = Path(path)
    held = [_read_bounded(path)]  # the only reference to the bytes: dropped once parsed
    # Parsing and decoding make millions of objects, none of them cyclic garbage: without the
    # collector's passes over the growing heap, a 10,000-fusion capture loads twice as fast.
    with collector_paused():
        capture = _parse_capture(path, held)
    if any(f.sm_timeline is not None for f in capture.fusions):
        from fusiondiff.io.timelines import verify_file

        verify_file(path, capture)  # a changed or foreign timeline file: one line
    return capture


def _parse_capture(path: Path, held: list[bytes]) -> Capture:
    raw = held.pop()
    capture = decode_capture_bytes(raw)  # a well-formed capture: msgspec, straight into the records
    if capture is not None:
        return capture
    # refused: what is wrong is named from the JSON first, then from the records' fields
    data = _parse_json(raw, path, "a fusiondiff capture")
    check_schema_version(data, str(path))
    return decode(data, Capture, str(path))


def read_json(path: str | os.PathLike[str], what: str) -> Any:
    """The JSON data of a file that is not a capture (a diff record), read under the same rules
    as a capture: bounded, from a regular file, numbers and nesting a record can hold, lone
    surrogates replaced; ``what`` (``"a fusiondiff diff record"``) names it in one-line errors."""
    path = Path(path)
    return _parse_json(_read_bounded(path, what.removeprefix("a fusiondiff ")), path, what)


def _parse_json(raw: bytes, path: Path, what: str) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CaptureFormatError(f"{path} is not {what} (not text)") from None
    del raw
    try:
        data = json.loads(text, parse_int=_json_int, parse_float=_json_float, parse_constant=_json_constant)
    except json.JSONDecodeError as exc:
        raise CaptureFormatError(f"{path} is not {what} (not JSON: {exc.msg} at line {exc.lineno})") from None
    except _NumberError as exc:
        raise CaptureFormatError(f"{path} is not {what} ({exc})") from None
    except ValueError as exc:
        raise CaptureFormatError(f"{path} is not {what} (not JSON: {exc})") from None
    except RecursionError:
        raise CaptureFormatError(f"{path} is not {what} (JSON nested too deeply)") from None
    except MemoryError:
        raise CaptureFormatError(f"{path} is too large to decode") from None
    return replace_surrogates(data) if _SURROGATE_ESCAPE.search(text) else data


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
"""A JSON escape of a UTF-16 surrogate: only there can a parsed string hold a lone one."""
_SURROGATE = re.compile("[\ud800-\udfff]")


def replace_surrogates(data: Any) -> Any:
    """``data`` (parsed JSON) with every lone surrogate in its strings and keys replaced by U+FFFD.

    JSON may escape half of a UTF-16 pair alone (``"\\ud800"``); Python keeps it as a character no
    encoder takes, so a report could not be written and a JSON output would hold what strict
    parsers refuse. The rule is the same for every file fusiondiff reads, on load: the
    replacement character, as a UTF-8 decoder writes for bytes it cannot read."""

    def fixed(value: Any) -> Any:
        return _SURROGATE.sub("\ufffd", value) if isinstance(value, str) else value

    root = [data]
    stack: list[Any] = [root]
    while stack:  # iterative: the data may be nested as deep as the parser allowed
        node = stack.pop()
        if isinstance(node, list):
            for i, value in enumerate(node):
                node[i] = fixed(value)
                if isinstance(value, (list, dict)):
                    stack.append(value)
        elif isinstance(node, dict):
            for key in list(node):
                value = node.pop(key)
                node[fixed(key)] = fixed(value)
                if isinstance(value, (list, dict)):
                    stack.append(value)
    return root[0]


def _read_bounded(path: Path, what: str = "capture") -> bytes:
    """The bytes of a regular file of at most :data:`MAX_CAPTURE_BYTES`. Opened without blocking,
    so a FIFO without a writer is refused instead of waited on; ``what`` names the file in errors."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise FusionDiffError(f"{path}: no such file") from None
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise FusionDiffError(f"cannot read {path}: {reason}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        if stat.S_ISDIR(info.st_mode):
            raise FusionDiffError(f"{path} is a directory; give the {what}'s .json file")
        raise CaptureFormatError(f"{path} is not a regular file (a FIFO or device); give the {what}'s .json file")
    too_large = f"{path} is larger than {MAX_CAPTURE_BYTES // 2**20} MiB: not a {what} fusiondiff reads"
    with os.fdopen(fd, "rb") as file:
        if info.st_size > MAX_CAPTURE_BYTES:
            raise CaptureFormatError(too_large)
        try:
            # read what the file holds plus one byte: asking for the bound at once would allocate it
            raw = file.read(info.st_size + 1)
            if len(raw) > info.st_size:  # it grew while read: bounded too
                raw += file.read(MAX_CAPTURE_BYTES + 1 - len(raw))
        except OSError as exc:
            raise FusionDiffError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_CAPTURE_BYTES:
        raise CaptureFormatError(too_large)
    return _gunzipped(path, raw) if raw.startswith(_GZIP_MAGIC) else raw


MAX_GZIP_MEMBERS = 64
"""gzip members a capture file may hold (fusiondiff writes one; ``cat a.gz b.gz`` makes two)."""


def _gunzipped(path: Path, raw: bytes) -> bytes:
    """What gzipped ``raw`` decompresses to, every member, at most :data:`MAX_CAPTURE_BYTES`
    (decompressed a piece at a time: a bomb stops at the bound, never fills the memory first)."""
    out = bytearray()
    rest = raw
    members = 0
    try:
        while rest:
            members += 1
            if members > MAX_GZIP_MEMBERS:  # a million empty members once took minutes
                raise CaptureFormatError(
                    f"{path} holds more than {MAX_GZIP_MEMBERS} gzip members: not a capture fusiondiff reads"
                )
            unpacker = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # one gzip member
            out += unpacker.decompress(rest, MAX_CAPTURE_BYTES + 1 - len(out))
            while unpacker.unconsumed_tail and len(out) <= MAX_CAPTURE_BYTES:
                out += unpacker.decompress(unpacker.unconsumed_tail, MAX_CAPTURE_BYTES + 1 - len(out))
            if len(out) > MAX_CAPTURE_BYTES:
                raise CaptureFormatError(
                    f"{path} decompresses to more than {MAX_CAPTURE_BYTES // 2**20} MiB: not a capture fusiondiff reads"
                )
            if not unpacker.eof:
                raise CaptureFormatError(f"{path} is not a fusiondiff capture (a gzip file cut short)")
            rest = unpacker.unused_data
    except zlib.error as exc:
        raise CaptureFormatError(f"{path} is not a fusiondiff capture (damaged gzip: {exc})") from None
    return bytes(out)


class _NumberError(ValueError):
    """A JSON number that no capture field can hold."""


def _json_int(text: str) -> int:
    # called for each of a capture's million numbers: the common case is decided first
    if len(text) <= MAX_INTEGER_DIGITS:  # the text is at least as long as its digits
        return int(text)
    digits = len(text.lstrip("-"))
    if digits > MAX_INTEGER_DIGITS:
        raise _NumberError(f"an integer has {digits} digits")
    return int(text)


_INFINITY = float("inf")
"""Compared with, rather than built anew for each number parsed."""


def _json_float(text: str) -> float:
    value = float(text)
    if value == _INFINITY or value == -_INFINITY:
        raise _NumberError(f"the number {text[:30]}{'...' if len(text) > 30 else ''} is too large for a float")
    return value


def _json_constant(name: str) -> float:
    raise _NumberError(f"{name} is not a JSON number")


def load_tensors(path: str | os.PathLike[str]) -> dict[str, torch.Tensor]:
    """The exact input storages saved with a capture (needs torch)."""
    from safetensors.torch import load_file

    tpath = tensors_path_for(path)
    if not tpath.exists():
        raise FusionDiffError(f"{path} has no saved tensors ({tpath.name} missing); capture with --save-inputs")
    return load_file(str(tpath))
