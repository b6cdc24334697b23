"""The one decoder: every recorded capture loads and round-trips, a value a rule refuses is named
with its field's path and the rule's words, from the file's bytes as from parsed JSON."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import pytest

from fusiondiff.diff import diff
from fusiondiff.diff.records import DiffResult
from fusiondiff.io.store import dumps_capture, load_capture
from fusiondiff.records import codec
from fusiondiff.records.codec import to_jsonable
from fusiondiff.records.constraints import INT64_MAX
from fusiondiff.records.errors import CaptureFormatError
from fusiondiff.records.model import ReportedBandwidth, TensorMeta

DATA = Path(__file__).parent.parent / "data"
PYTHIA = DATA / "fidelity/pythia/live.json"
EVERY_CAPTURE = sorted(
    p for p in DATA.glob("**/*.json") if p.read_text()[:40].replace(" ", "").startswith('{\n"kind":')
)


def _communication(**change: object) -> dict[str, object]:
    """SYNTHETIC: a communication kernel's record (no capture here was recorded under torchrun)."""
    record: dict[str, object] = {
        "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
        "calls": 2,
        "samples_ns": [1000.0, 3000.0],
        "total_ns": 4000.0,
        "stream": 13,
        "launch": {"grid": [2, 1, 1], "block": [640, 1, 1]},
    }
    return record | change


@pytest.mark.parametrize("path", EVERY_CAPTURE, ids=lambda p: str(p.relative_to(DATA)))
def test_every_recorded_capture_loads_the_same_from_bytes_and_from_parsed_json(path: Path) -> None:
    raw = path.read_bytes()
    from_bytes = codec.decode_capture_bytes(raw)
    assert from_bytes is not None, "a recorded capture is accepted as it is"
    assert from_bytes == codec.capture_from_jsonable(json.loads(raw), str(path))
    written = dumps_capture(from_bytes)
    assert codec.decode_capture_bytes(written.encode()) == from_bytes, "what is written reads back equal"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["fusions"][0]["timing"]["samples_ns"].__setitem__(0, -1.0), "timing.samples_ns[0]: -1.0 is not"),
        (
            lambda d: d["fusions"][0]["timing"]["samples_ns"].__setitem__(0, None),
            "samples_ns[0]: null is not a duration",
        ),
        (
            lambda d: d["fusions"][0]["timing"]["samples_ns"].__setitem__(0, True),
            "samples_ns[0]: expected float, found True",
        ),
        (lambda d: d["fusions"][0]["inputs"][0].__setitem__("shape", [-1, 2]), "inputs[0].shape[0]: -1 is negative"),
        (lambda d: d["fusions"][0]["inputs"][0].__setitem__("stride", [1]), "inputs[0]: shape has 2 dimensions but"),
        (lambda d: d["fusions"][0].__setitem__("call_count", 0), "call_count: 0 is not a positive count"),
        (
            lambda d: d["fusions"][0].__setitem__("device_index", 2**63),
            "device_index: 9223372036854775808 does not fit",
        ),
        (
            lambda d: d["fusions"][0]["kernels"][0]["launch"].__setitem__("grid", [1, 2]),
            "grid: expected 3 items, found 2",
        ),
        (
            lambda d: d["protocol"].__setitem__("l2_mode", "lukewarm"),
            "l2_mode: 'lukewarm' is not one of ['cold', 'warm']",
        ),
        (lambda d: d["protocol"].__setitem__("method", "nsight"), "protocol.method: 'nsight' is not one of ['kineto',"),
        (lambda d: d["fusions"][0].pop("definition"), "fusions[0]: missing field 'definition'"),
        (
            lambda d: d["environment"].__setitem__("nvfuser_env", {"NVFUSER_A": "1", "NVFUSER_B": 2}),
            "NVFUSER_B: expected str",
        ),
        (lambda d: d["environment"].__setitem__("world_size", 0), "environment.world_size: 0 is not a positive count"),
        (lambda d: d["fusions"][0].__setitem__("inputs", {}), "fusions[0].inputs: expected a list, found dict"),
        (lambda d: d.__setitem__("communication", [_communication(calls=1)]), "2 samples for 1 call(s)"),
        (lambda d: d.__setitem__("communication", [_communication(total_ns=-1.0)]), "total_ns: -1.0 is not a duration"),
        (lambda d: d.__setitem__("communication", [_communication(samples_ns=[1.0, None])]), "samples_ns[1]: null is"),
    ],
)
def test_a_refused_value_is_named_with_its_path_and_its_rule(change: Any, message: str) -> None:
    data = json.loads(PYTHIA.read_text())
    change(data)
    assert codec.decode_capture_bytes(json.dumps(data).encode()) is None
    with pytest.raises(CaptureFormatError) as raised:
        codec.capture_from_jsonable(data, "live.json")
    assert str(raised.value).startswith("live.json.") and message in str(raised.value)


def test_a_file_without_its_schema_version_is_refused_though_the_record_has_a_default(tmp_path: Path) -> None:
    data = json.loads(PYTHIA.read_text())
    del data["schema_version"]
    assert codec.decode_capture_bytes(json.dumps(data).encode()) is None
    (tmp_path / "c.json").write_text(json.dumps(data))
    with pytest.raises(CaptureFormatError, match=r"not a fusiondiff capture \(no schema_version\)"):
        load_capture(tmp_path / "c.json")


def test_a_nan_float_written_as_null_reads_back_as_nan() -> None:
    """JSON has no NaN: nvFuser's bandwidth figures and a diff's medians may be NaN, written as null."""
    capture = load_capture(PYTHIA)
    kernel = capture.fusions[0].kernels[0]
    odd = ReportedBandwidth(input_bytes=8, output_bytes=8, effective_gbs=math.nan, percent_of_peak=3)
    changed = dataclasses.replace(kernel, reported_bandwidth=odd)
    fusion = dataclasses.replace(capture.fusions[0], kernels=(changed, *capture.fusions[0].kernels[1:]))
    raw = dumps_capture(dataclasses.replace(capture, fusions=(fusion,)))
    assert '"effective_gbs": null' in raw
    read = codec.decode_capture_bytes(raw.encode())
    assert read is not None
    bandwidth = read.fusions[0].kernels[0].reported_bandwidth
    assert bandwidth is not None and math.isnan(bandwidth.effective_gbs)
    assert type(bandwidth.percent_of_peak) is float and bandwidth.percent_of_peak == 3.0


def test_a_diff_with_missing_medians_reads_back_from_its_json() -> None:
    failed = load_capture(DATA / "fidelity/crash/replay.json")
    live = load_capture(DATA / "fidelity/crash/live.json")
    result = diff(live, failed)
    data = json.loads(json.dumps(to_jsonable(result)))
    assert None in (data["pairs"][0]["timing"]["median_b_ns"], data["pairs"][0]["timing"]["ratio"])
    read = codec.decode(data, DiffResult, "diff")
    assert to_jsonable(read) == to_jsonable(result)


def test_records_refuse_what_their_fields_cannot_hold_when_built_in_code_too() -> None:
    with pytest.raises(ValueError, match="shape has 2 dimensions but stride 1"):
        TensorMeta(index=0, kind="tensor", dtype="torch.float32", shape=(2, 3), stride=(1,))
    with pytest.raises(ValueError, match="min_value 2 is above max_value 1"):
        TensorMeta(index=0, kind="tensor", dtype="torch.int64", shape=(2,), stride=(1,), min_value=2, max_value=1)


def test_an_integer_field_holds_64_bits_and_no_more() -> None:
    data = json.loads(PYTHIA.read_text())
    kernel: dict[str, Any] = data["fusions"][0]["kernels"][0]
    kernel["stream"] = INT64_MAX
    assert codec.capture_from_jsonable(data).fusions[0].kernels[0].stream == INT64_MAX
    kernel["stream"] = INT64_MAX + 1
    with pytest.raises(CaptureFormatError, match=r"kernels\[0\]\.stream: 9223372036854775808 does not fit in 64 bits"):
        codec.capture_from_jsonable(data, "live.json")


def _leaf_paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path] if path else []
    items = value.items() if isinstance(value, dict) else enumerate(value[:2]) if isinstance(value, list) else ()
    for key, inner in items:
        found += _leaf_paths(inner, (*path, key))
    return found


def test_any_one_value_replaced_is_read_or_refused_in_one_line_naming_its_place() -> None:
    """Every place of a capture (its first fusion, a communication kernel, reported bandwidth),
    given values of every JSON type: never a crash, a refusal is one line that starts with the file."""
    data = json.loads(PYTHIA.read_text())
    data["fusions"] = data["fusions"][:1]
    data["communication"] = [_communication()]
    data["fusions"][0]["kernels"][0]["reported_bandwidth"] = {
        "input_bytes": 1,
        "output_bytes": 2,
        "effective_gbs": 1.0,
        "percent_of_peak": 2.0,
    }
    refused = 0
    for path in _leaf_paths(data):
        for value in (None, True, -1, "x", [], {}, 2**64, -0.5, [1, 2]):
            changed = json.loads(json.dumps(data))
            parent = changed
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]] = value
            try:
                codec.capture_from_jsonable(changed, "c.json")
            except CaptureFormatError as exc:
                refused += 1
                assert str(exc).startswith("c.json") and "\n" not in str(exc), (path, value, str(exc))
    assert refused > 1000


def _with_version(data: dict[str, Any], *members: str) -> bytes:
    """``data`` as JSON text with ``members`` (``"schema_version": 1``...) at its end, in order."""
    return (json.dumps(data)[:-1] + "".join(f", {m}" for m in members) + "}").encode()


@pytest.mark.parametrize(
    ("members", "accepted"),
    [
        (['"schema_version": 1'], True),
        ([], False),  # none: the record's default does not stand in for it
        (['"schema_version": 2'], False),  # newer than this fusiondiff reads
        (['"schema_version": 0'], False),
        (['"schema_version": 2', '"schema_version": 1'], True),  # twice: the last one counts, as in json.loads
        (['"schema_version": 1', '"schema_version": 2'], False),
        (['"z": "\\"schema_version\\": 1"'], False),  # only inside a string
        (['"schema_version": true'], False),
    ],
)
def test_the_schema_version_is_the_files_own_read_in_the_same_pass(members: list[str], accepted: bool) -> None:
    """The version is read with the rest of the capture, and accepted as the file's top-level
    ``schema_version`` says (a field the text holds, not the record's default)."""
    data = json.loads(PYTHIA.read_text())
    del data["schema_version"]
    raw = _with_version(data, *members)
    assert json.loads(raw).get("schema_version") in ((1,) if accepted else (None, 0, 2, True))
    assert (codec.decode_capture_bytes(raw) is not None) is accepted
