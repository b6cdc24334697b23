"""Timeline files: written and read back, and every bad or mismatched one refused in one line."""

from __future__ import annotations

import dataclasses
import json
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from inprocess import fusiondiff

from fusiondiff.io.store import load_capture, save_capture
from fusiondiff.io.timelines import (
    TimelineFormatError,
    copied,
    decode,
    encode,
    load_arrays,
    rebased,
    sha256_of,
    timeline_path_for,
)
from tests.blocks.conftest import BLOCKS


def _copy_seed(tmp_path: Path) -> Path:
    for name in ("live.json", "live.timeline.safetensors", "replay.json", "replay.timeline.safetensors"):
        shutil.copy(BLOCKS / "seed" / name, tmp_path / name)
    return tmp_path


def _fusiondiff(*args: str) -> subprocess.CompletedProcess[str]:
    """``fusiondiff ARGS`` run in this process (``tests/inprocess.py``)."""
    return fusiondiff(*args)


def test_arrays_round_trip_exactly_and_read_as_safetensors():
    arrays = {
        "f0.k0.start_ns": np.array([[0, 5, 2**40]], dtype=np.int64),
        "f0.k0.end_ns": np.array([[7, 9, 2**40 + 3]], dtype=np.int64),
        "f0.k0.sm": np.array([[0, 131, 7]], dtype=np.int16),
    }
    data = encode(arrays)
    back = decode(data, "t.safetensors")
    assert sorted(back) == sorted(arrays) and all(np.array_equal(back[k], arrays[k]) for k in arrays)
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    loaded = safetensors_numpy.load(data)
    assert all(np.array_equal(loaded[k], arrays[k]) for k in arrays)


def _header(data: bytes) -> dict:
    (length,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8 : 8 + length])


def _with_header(data: bytes, header: dict) -> bytes:
    (length,) = struct.unpack("<Q", data[:8])
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data[8 + length :]


GOOD = encode({"a.start_ns": np.zeros((1, 4), np.int32), "a.sm": np.ones((1, 4), np.int16)})


@pytest.mark.parametrize(
    ("damaged", "message"),
    [
        (b"\x01\x02", "shorter than its header length"),
        (struct.pack("<Q", 10**12) + b"{}", "a header of"),
        (struct.pack("<Q", 3) + b"{x}", "not JSON"),
        (
            _with_header(GOOD, {**_header(GOOD), "a.sm": {"dtype": "F32", "shape": [1, 4], "data_offsets": [16, 24]}}),
            "dtype",
        ),
        (
            _with_header(GOOD, {**_header(GOOD), "a.sm": {"dtype": "I16", "shape": [4], "data_offsets": [16, 24]}}),
            "is not \\[runs, ctas\\]",
        ),
        (
            _with_header(GOOD, {**_header(GOOD), "a.sm": {"dtype": "I16", "shape": [1, 5], "data_offsets": [16, 24]}}),
            "do not hold",
        ),
        (
            _with_header(GOOD, {**_header(GOOD), "a.sm": {"dtype": "I16", "shape": [1, 4], "data_offsets": [8, 16]}}),
            "overlap",
        ),
        (GOOD + b"\x00" * 8, "bytes after its last array"),
    ],
)
def test_a_damaged_file_is_refused_in_one_line(damaged, message):
    with pytest.raises(TimelineFormatError, match=message) as caught:
        decode(damaged, "t.safetensors")
    assert "\n" not in str(caught.value)


def test_a_changed_timeline_file_is_refused_when_its_capture_is_read(tmp_path):
    folder = _copy_seed(tmp_path)
    path = folder / "live.timeline.safetensors"
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(TimelineFormatError, match="does not belong to"):
        load_capture(folder / "live.json")
    result = _fusiondiff("diff", str(folder / "live.json"), str(folder / "replay.json"))
    assert result.returncode == 2 and result.stdout == ""
    assert (
        len(result.stderr.strip().splitlines()) == 1 and "live.timeline.safetensors does not belong to" in result.stderr
    )


def test_another_captures_timeline_file_is_refused(tmp_path):
    folder = _copy_seed(tmp_path)
    shutil.copy(folder / "replay.timeline.safetensors", folder / "live.timeline.safetensors")
    result = _fusiondiff("show", str(folder / "live.json"))
    assert result.returncode == 2 and "its sha256 is not the one the capture names" in result.stderr


def test_arrays_that_do_not_give_the_recorded_statistics_are_refused(tmp_path):
    folder = _copy_seed(tmp_path)
    capture = load_capture(folder / "live.json")
    arrays = {k: v for k, v in decode((folder / "live.timeline.safetensors").read_bytes(), "x").items()}
    arrays["f0.k0.end_ns"] = arrays["f0.k0.end_ns"] + 32  # every CTA 32 ns longer: the JSON says otherwise
    data = encode({k: v.astype(np.int32) if "sm" not in k else v.astype(np.int16) for k, v in arrays.items()})
    (folder / "live.timeline.safetensors").write_bytes(data)
    timeline = dataclasses.replace(capture.fusions[0].sm_timeline, sha256=sha256_of(data))
    save_capture(
        dataclasses.replace(capture, fusions=(dataclasses.replace(capture.fusions[0], sm_timeline=timeline),)),
        folder / "live.json",
    )
    capture = load_capture(folder / "live.json")  # the checksum matches now
    with pytest.raises(TimelineFormatError, match="do not give the statistics the capture holds"):
        load_arrays(folder / "live.json", capture)


@pytest.mark.parametrize("name", ["../live.timeline.safetensors", "/etc/passwd", "a\x1bb"])
def test_a_timeline_file_outside_the_captures_folder_is_refused(tmp_path, name):
    folder = _copy_seed(tmp_path)
    text = (
        (folder / "live.json")
        .read_text()
        .replace('"file": "live.timeline.safetensors"', json.dumps({"file": name})[1:-1])
    )
    (folder / "live.json").write_text(text)
    result = _fusiondiff("show", str(folder / "live.json"))
    assert result.returncode == 2 and "is not a file in the capture's folder" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_missing_timeline_file_leaves_the_statistics_and_no_arrays(tmp_path):
    folder = _copy_seed(tmp_path)
    (folder / "live.timeline.safetensors").unlink()
    capture = load_capture(folder / "live.json")
    assert capture.fusions[0].sm_timeline.measured and load_arrays(folder / "live.json", capture) == {}
    result = _fusiondiff("diff", str(folder / "live.json"), str(folder / "replay.json"))
    assert result.returncode == 1 and "blocks_extra_wave" in result.stdout


def test_records_moved_elsewhere_keep_their_arrays(tmp_path):
    # a round trip splits a batch's replay into one capture per script, then merges them one folder up
    logs, replays = tmp_path / "logs", tmp_path / "replays"
    logs.mkdir()
    shutil.copy(BLOCKS / "seed" / "replay.json", logs / "batch.json")
    shutil.copy(BLOCKS / "seed" / "replay.timeline.safetensors", logs / "replay.timeline.safetensors")
    one = copied(load_capture(logs / "batch.json"), logs / "batch.json", replays / "fusion0.json")
    save_capture(one, replays / "fusion0.json")
    assert (
        one.fusions[0].sm_timeline.file == "fusion0.timeline.safetensors"
        and timeline_path_for(replays / "fusion0.json").exists()
    )
    merged = rebased(load_capture(replays / "fusion0.json"), replays / "fusion0.json", tmp_path / "replay.json")
    assert merged.fusions[0].sm_timeline.file == "replays/fusion0.timeline.safetensors"
    save_capture(merged, tmp_path / "replay.json")
    arrays = load_arrays(tmp_path / "replay.json", load_capture(tmp_path / "replay.json"))
    expected = load_arrays(BLOCKS / "seed" / "replay.json", load_capture(BLOCKS / "seed" / "replay.json"))
    assert np.array_equal(arrays[(0, 0)].start_ns, expected[(0, 0)].start_ns)
