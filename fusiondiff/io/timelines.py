"""The CTA arrays of a capture's timelines: one safetensors file beside the capture's JSON.

``live.json`` gets ``live.timeline.safetensors``. Per kernel, under the key prefix its
:class:`~fusiondiff.records.blocks.KernelTimeline` names (``f3.k1``), arrays of shape
``[runs, ctas]`` indexed by linear block id: ``start_ns`` and ``end_ns`` (from each run's first CTA
start), ``sm``, and where they occur ``sm_end`` (a CTA that moved) and ``cluster``. Times are
stored in 32 bits where every value fits and in 64 bits otherwise (the dtype is in the file), so
nothing is cut.

The file is written and read here with numpy alone (the safetensors layout: an 8-byte header
length, a JSON header, the raw little-endian data), so reading needs no torch nor the safetensors
package, and a file from elsewhere is checked before anything is believed: its size, its header,
every array's dtype, shape and byte range, then the sha256 the capture's JSON holds for it, then
each array against the kernel it belongs to (shape, times in order, statistics equal to the JSON's).
Each refusal is one :class:`TimelineFormatError` line naming the file.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import struct
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from fusiondiff.records import limits
from fusiondiff.records.block_stats import run_stats
from fusiondiff.records.blocks import BlockStats, FusionTimeline, KernelTimeline
from fusiondiff.records.errors import CaptureFormatError

MAX_TIMELINE_BYTES = limits.TIMELINE_BYTES
"""Timeline files larger than 1 GiB are refused (a training step's timelines are tens of MiB)."""
MAX_HEADER_BYTES = 16 << 20
_DTYPES: dict[str, np.dtype[Any]] = {"I16": np.dtype("<i2"), "I32": np.dtype("<i4"), "I64": np.dtype("<i8")}
_NAMES = {v: k for k, v in _DTYPES.items()}
ARRAYS = ("start_ns", "end_ns", "sm", "sm_end", "cluster")
REQUIRED = ("start_ns", "end_ns", "sm")


class TimelineFormatError(CaptureFormatError):
    """A timeline file is damaged, foreign, or does not belong to the capture that names it."""


@dataclass(frozen=True)
class KernelArrays:
    """One kernel's CTAs over its runs: arrays of shape ``[runs, ctas]``."""

    start_ns: npt.NDArray[np.int64]
    end_ns: npt.NDArray[np.int64]
    sm: npt.NDArray[np.int64]
    sm_end: npt.NDArray[np.int64] | None = None
    cluster: npt.NDArray[np.int64] | None = None

    @property
    def runs(self) -> int:
        return int(self.start_ns.shape[0])

    def run_stats(self, run: int) -> BlockStats:
        """The statistics of run ``run``."""
        return run_stats(
            self.start_ns[run], self.end_ns[run], self.sm[run], None if self.sm_end is None else self.sm_end[run]
        )


MAX_SMS = 4096
"""SM ids past the GPU's SM count are refused; where the capture does not say it, past this
(:data:`fusiondiff.records.constraints.SmCount`'s bound)."""


def timeline_path_for(json_path: str | os.PathLike[str]) -> Path:
    """The timeline file that goes with a capture's JSON file."""
    path = Path(json_path)
    return path.with_name(path.stem + ".timeline.safetensors")


def compact(values: npt.NDArray[np.int64], small: str = "I32") -> npt.NDArray[np.generic]:
    """``values`` in the smallest of ``small`` and 64 bits that holds every one of them exactly."""
    dtype = _DTYPES[small]
    info = np.iinfo(dtype)
    if values.size == 0 or (int(values.min()) >= info.min and int(values.max()) <= info.max):
        return values.astype(dtype)
    return values.astype(_DTYPES["I64"])


def encode(arrays: Mapping[str, npt.NDArray[np.generic]]) -> bytes:
    """The safetensors bytes of ``arrays`` (names in sorted order, data contiguous)."""
    header: dict[str, object] = {"__metadata__": {"format": "fusiondiff-timeline", "version": "1"}}
    chunks = []
    offset = 0
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        dtype = array.dtype.newbyteorder("<") if array.dtype.byteorder == ">" else array.dtype
        if dtype not in _NAMES:
            raise ValueError(f"{name}: dtype {array.dtype} is not stored in timelines")
        data = array.astype(dtype).tobytes()
        header[name] = {
            "dtype": _NAMES[dtype],
            "shape": list(array.shape),
            "data_offsets": [offset, offset + len(data)],
        }
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def decode(data: bytes, origin: str) -> dict[str, npt.NDArray[np.int64]]:
    """The arrays of a timeline file's bytes, each checked; :class:`TimelineFormatError` otherwise."""
    if len(data) < 8:
        raise TimelineFormatError(f"{origin} is not a timeline file (shorter than its header length)")
    (length,) = struct.unpack("<Q", data[:8])
    if length > MAX_HEADER_BYTES or 8 + length > len(data):
        raise TimelineFormatError(f"{origin} is not a timeline file (a header of {length} bytes)")
    try:
        header = json.loads(data[8 : 8 + length].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise TimelineFormatError(f"{origin} is not a timeline file (its header is not JSON)") from None
    if not isinstance(header, dict):
        raise TimelineFormatError(f"{origin} is not a timeline file (its header is not an object)")
    body = memoryview(data)[8 + length :]
    arrays: dict[str, npt.NDArray[np.int64]] = {}
    spans = []
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        where = f"{origin}: array {name!r:.60}"
        if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
            raise TimelineFormatError(f"{where} is not described by dtype, shape and data_offsets")
        dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        if dtype not in _DTYPES:
            raise TimelineFormatError(f"{where}: dtype {dtype!r:.20} is not one a timeline holds (I16, I32, I64)")
        if not (isinstance(shape, list) and len(shape) == 2 and all(_count(v) for v in shape)):
            raise TimelineFormatError(f"{where}: shape {shape!r:.40} is not [runs, ctas]")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(_count(v) for v in offsets)):
            raise TimelineFormatError(f"{where}: data_offsets {offsets!r:.40} are not two byte offsets")
        begin, end = offsets
        if not begin <= end <= len(body) or end - begin != math.prod(shape) * _DTYPES[dtype].itemsize:
            raise TimelineFormatError(f"{where}: bytes {begin}..{end} do not hold a {dtype} array of shape {shape}")
        spans.append((begin, end))
        arrays[name] = np.frombuffer(body[begin:end], dtype=_DTYPES[dtype]).reshape(shape).astype(np.int64)
    position = 0
    for begin, end in sorted(spans):
        if begin != position:
            raise TimelineFormatError(f"{origin}: its arrays overlap or leave bytes unaccounted for")
        position = end
    if position != len(body):
        raise TimelineFormatError(f"{origin}: {len(body) - position} bytes after its last array")
    return arrays


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**48


def read_bytes(path: Path) -> bytes:
    """The bytes of a regular file of at most :data:`MAX_TIMELINE_BYTES`."""
    from fusiondiff.io.files import read_bounded

    try:  # sized by what the file holds: asking for the bound at once reserved 1 GiB for 41 KiB
        return read_bounded(path, MAX_TIMELINE_BYTES, what="timeline file")
    except OSError as exc:
        raise TimelineFormatError(f"cannot read {path}: {exc.strerror or exc}") from None


def timeline_file(capture_path: str | os.PathLike[str], timeline: FusionTimeline) -> Path | None:
    """Where ``timeline``'s file is, relative to the capture's folder; ``None`` when it names none.
    A name that leaves that folder (absolute, ``..``) or is not printable is refused: captures travel."""
    if timeline.file is None:
        return None
    name = timeline.file
    parts = Path(name).parts
    if not name or not name.isprintable() or Path(name).is_absolute() or ".." in parts or "\\" in name:
        raise TimelineFormatError(
            f"{capture_path}: sm_timeline.file {name!r:.60} is not a file in the capture's folder"
        )
    return Path(capture_path).parent / name


def _files(capture: Any, capture_path: str | os.PathLike[str]) -> dict[Path, str | None]:
    """Each timeline file the capture's records name, with the sha256 they name for it (two
    records naming one file with two checksums is refused)."""
    files: dict[Path, str | None] = {}
    for fusion in capture.fusions:
        timeline = fusion.sm_timeline
        path = None if timeline is None else timeline_file(capture_path, timeline)
        if path is None:
            continue
        if files.setdefault(path, timeline.sha256) != timeline.sha256:
            raise TimelineFormatError(f"{capture_path}: its records name {path.name} with two different sha256")
    return files


def _checked(path: Path, sha256: str | None, capture_path: str | os.PathLike[str]) -> dict[str, npt.NDArray[np.int64]]:
    data = read_bytes(path)
    if sha256 is None or sha256_of(data) != sha256:
        raise TimelineFormatError(
            f"{path} does not belong to {capture_path}: its sha256 is not the one the capture names "
            "(the file was changed, or is another capture's)"
        )
    return decode(data, str(path))


def verify_file(capture_path: str | os.PathLike[str], capture: Any) -> None:
    """Refuse, in one line, a timeline file the capture names that is not the one it names (another
    sha256) or is damaged. A missing file is not refused here: the JSON still holds every
    statistic; the views say the arrays are missing."""
    for path, sha256 in _files(capture, capture_path).items():
        if path.exists():
            _checked(path, sha256, capture_path)


def load_arrays(capture_path: str | os.PathLike[str], capture: Any) -> dict[tuple[int, int], KernelArrays]:
    """Every measured kernel's arrays, keyed by ``(fusion position in the capture, kernel order)``,
    each checked against its kernel's record: shapes ``[runs, ctas]``, ends not before starts, SMs
    not negative, and its statistics recomputed equal to those the JSON holds. Kernels whose file
    is missing are left out."""
    files = {
        path: _checked(path, sha, capture_path) for path, sha in _files(capture, capture_path).items() if path.exists()
    }
    sm_count = getattr(getattr(capture, "environment", None), "sm_count", None)
    sm_limit = sm_count if sm_count else MAX_SMS
    out = {}
    for index, fusion in enumerate(capture.fusions):
        timeline = fusion.sm_timeline
        path = None if timeline is None else timeline_file(capture_path, timeline)
        if path is None or path not in files:
            continue
        for kernel in timeline.measured:
            out[(index, kernel.order)] = _kernel_arrays(files[path], kernel, str(path), sm_limit, bool(sm_count))
    return out


def _kernel_arrays(
    arrays: Mapping[str, npt.NDArray[np.int64]],
    kernel: KernelTimeline,
    origin: str,
    sm_limit: int = MAX_SMS,
    sm_known: bool = False,
) -> KernelArrays:
    prefix = kernel.arrays
    where = f"{origin}: {kernel.kernel}"
    if prefix is None:
        raise TimelineFormatError(f"{where} is measured but names no arrays")
    missing = [n for n in REQUIRED if f"{prefix}.{n}" not in arrays]
    if missing:
        raise TimelineFormatError(f"{where}: array {prefix}.{missing[0]} is missing")
    shape = (len(kernel.runs), kernel.runs[0].ctas)
    if shape[1] < 1:
        raise TimelineFormatError(f"{where}: a timeline of 0 CTAs")
    found = {n: arrays[f"{prefix}.{n}"] for n in ARRAYS if f"{prefix}.{n}" in arrays}
    for name, array in found.items():
        if array.shape != shape:
            raise TimelineFormatError(
                f"{where}: {prefix}.{name} has shape {list(array.shape)}, the capture says {list(shape)}"
            )
    result = KernelArrays(**found)
    if (result.end_ns < result.start_ns).any() or (result.start_ns < 0).any() or (result.sm < 0).any():
        raise TimelineFormatError(f"{where}: a CTA ends before it starts, or has a negative start or SM")
    for name in ("sm", "sm_end"):
        array = getattr(result, name)
        if array is not None and array.size and (array.max() >= sm_limit or array.min() < 0):
            # every per-SM view is sized by the SM ids: bounded by the GPU's own SM count
            raise TimelineFormatError(
                f"{where}: a CTA on SM {int(array.max())}, past the {sm_limit} SMs "
                + ("the capture's GPU has" if sm_known else "any GPU has")
            )
    for run, recorded in enumerate(kernel.runs):
        if not _same_stats(result.run_stats(run), recorded):
            raise TimelineFormatError(f"{where}: run {run}'s arrays do not give the statistics the capture holds")
    return result


def _same_stats(a: BlockStats, b: BlockStats) -> bool:
    for f in fields(BlockStats):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if not math.isclose(float(x), float(y), rel_tol=1e-9, abs_tol=1e-6):
            return False
    return True


def write_file(path: Path, arrays: Mapping[str, npt.NDArray[np.generic]]) -> str:
    """Write ``arrays`` to ``path`` atomically (:func:`fusiondiff.io.files.atomic_write`); their sha256."""
    from fusiondiff.io.files import atomic_write

    data = encode(arrays)
    atomic_write(path, lambda tmp: Path(tmp).write_bytes(data))
    return sha256_of(data)


def attach_file(capture: Any, json_path: str | os.PathLike[str], arrays: Mapping[str, npt.NDArray[np.generic]]) -> Any:
    """``capture`` with each timeline naming the file ``arrays`` are written to, beside ``json_path``."""
    import dataclasses

    path = timeline_path_for(json_path)
    digest = write_file(path, arrays)
    fusions = tuple(
        dataclasses.replace(f, sm_timeline=dataclasses.replace(f.sm_timeline, file=path.name, sha256=digest))
        if f.sm_timeline is not None and f.sm_timeline.measured
        else f
        for f in capture.fusions
    )
    return dataclasses.replace(capture, fusions=fusions)


def rebased(capture: Any, origin: str | os.PathLike[str], target: str | os.PathLike[str]) -> Any:
    """``capture``, read from ``origin``, with each timeline's file named relative to ``target``
    (a capture written elsewhere: a round trip's merged replay names ``replays/<stem>...``). A file
    that would lie outside ``target``'s folder is copied beside it instead (:func:`copied`)."""
    import dataclasses

    target_dir = Path(os.path.abspath(Path(target).parent))
    fusions = []
    for fusion in capture.fusions:
        path = None if fusion.sm_timeline is None else timeline_file(origin, fusion.sm_timeline)
        if path is None:
            fusions.append(fusion)
            continue
        relative = os.path.relpath(os.path.abspath(path), target_dir)
        if relative.startswith(".."):
            return copied(capture, origin, target)
        fusions.append(dataclasses.replace(fusion, sm_timeline=dataclasses.replace(fusion.sm_timeline, file=relative)))
    return dataclasses.replace(capture, fusions=tuple(fusions))


def copied(capture: Any, origin: str | os.PathLike[str], target: str | os.PathLike[str]) -> Any:
    """``capture`` (some records of the one read from ``origin``) with the arrays of its measured
    kernels written beside ``target`` (:func:`timeline_path_for`), and its timelines naming that
    file; the capture itself is not written."""
    arrays = load_arrays(origin, capture)
    out: dict[str, npt.NDArray[np.generic]] = {}
    for index, fusion in enumerate(capture.fusions):
        for kernel in () if fusion.sm_timeline is None else fusion.sm_timeline.measured:
            found = arrays.get((index, kernel.order))
            if found is None or kernel.arrays is None:
                continue
            for name in ARRAYS:
                value = getattr(found, name)
                if value is not None:
                    out[f"{kernel.arrays}.{name}"] = compact(value, "I16" if name in ("sm", "sm_end") else "I32")
    if not out:
        return capture
    return attach_file(capture, target, out)
