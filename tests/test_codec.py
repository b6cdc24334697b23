"""The fast capture decoder builds what the reference decoder builds, and defers to it on doubt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fusiondiff import codec, model
from fusiondiff.validate import validate_capture

DATA = Path(__file__).parent / "data"
RECORDED = sorted(DATA.glob("fidelity/*/*.json"))
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


def test_communication_takes_both_fast_paths() -> None:
    data = json.loads((DATA / "fidelity/pythia/live.json").read_text())
    data["communication"] = [_communication()]
    fast = codec.try_decode_capture(data)
    assert fast is not None and fast.communication[0].calls == 2
    assert codec.decode_capture_bytes(json.dumps(data).encode()) == fast
    reference = model._decode_record(model.Capture, data, "live.json")
    validate_capture(reference, "live.json")
    assert model.to_jsonable(fast) == model.to_jsonable(reference)


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fast_decoder_equals_reference(path: Path) -> None:
    data = json.loads(path.read_text())
    fast = codec.try_decode_capture(data)
    assert fast is not None, "a recorded capture should take the fast path"
    reference = model._decode_record(model.Capture, data, str(path))
    validate_capture(reference, str(path))
    assert model.to_jsonable(fast) == model.to_jsonable(reference)


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["fusions"][0]["timing"]["samples_ns"].__setitem__(0, -1.0),
        lambda d: d["fusions"][0]["timing"]["samples_ns"].__setitem__(0, None),
        lambda d: d["fusions"][0]["timing"]["samples_ns"].__setitem__(0, True),
        lambda d: d["fusions"][0]["inputs"][0].__setitem__("shape", [-1, 2]),
        lambda d: d["fusions"][0]["inputs"][0].__setitem__("stride", [1]),
        lambda d: d["fusions"][0].__setitem__("call_count", 0),
        lambda d: d["fusions"][0].__setitem__("device_index", 2**63),
        lambda d: d["fusions"][0]["kernels"][0]["launch"].__setitem__("grid", [1, 2]),
        lambda d: d["protocol"].__setitem__("l2_mode", "lukewarm"),
        lambda d: d["fusions"][0].pop("definition"),
        lambda d: d.__setitem__("communication", [_communication(calls=1)]),  # 2 samples, 1 call
        lambda d: d.__setitem__("communication", [_communication(total_ns=-1.0)]),
        lambda d: d.__setitem__("communication", [_communication(samples_ns=[1.0, None])]),
    ],
)
def test_fast_decoder_defers_what_the_reference_refuses(change) -> None:
    data = json.loads((DATA / "fidelity/pythia/live.json").read_text())
    change(data)
    assert codec.try_decode_capture(data) is None
    assert codec.decode_capture_bytes(json.dumps(data).encode()) is None, "msgspec's path defers too"
    with pytest.raises(model.CaptureFormatError):
        model.capture_from_jsonable(data, "live.json")


@pytest.mark.parametrize("path", EVERY_CAPTURE, ids=lambda p: str(p.relative_to(DATA)))
def test_msgspec_path_builds_what_the_compiled_decoder_builds(path: Path) -> None:
    pytest.importorskip("msgspec")
    raw = path.read_bytes()
    from_bytes = codec.decode_capture_bytes(raw)
    assert from_bytes is not None, "a recorded capture should take msgspec's path"
    compiled = model.capture_from_jsonable(json.loads(raw), str(path))
    assert model.to_jsonable(from_bytes) == model.to_jsonable(compiled)


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.pop("schema_version"),  # the record's default must not stand in for it
        lambda d: d.__setitem__("schema_version", 99),
        lambda d: d["fusions"][0]["timing"]["samples_ns"].__setitem__(0, float("inf")),
        lambda d: d["fusions"][0]["timing"]["samples_ns"].__setitem__(0, 10**400),
        lambda d: d["fusions"][0]["inputs"][0].__setitem__("max_value", 10**400),
        lambda d: d["fusions"][0]["inputs"][0].__setitem__("storage_offset", 2**64),
        lambda d: d["fusions"][0]["inputs"][0].__setitem__("shape", [2**63, 1]),
        lambda d: (
            d["fusions"][0]["inputs"][0].__setitem__(
                "min_value",
                5,
            )
            or d["fusions"][0]["inputs"][0].__setitem__("max_value", 1)
        ),
        lambda d: d["environment"].__setitem__("world_size", 0),
    ],
)
def test_msgspec_path_defers_what_only_the_reference_can_name(change) -> None:
    pytest.importorskip("msgspec")
    data = json.loads((DATA / "fidelity/pythia/live.json").read_text())
    change(data)
    assert codec.decode_capture_bytes(json.dumps(data).encode()) is None


def test_without_msgspec_the_compiled_path_loads(monkeypatch, tmp_path) -> None:
    from fusiondiff.store import load_capture

    monkeypatch.setattr(codec, "_msgspec_decoders", lambda: None)
    assert codec.decode_capture_bytes(b"{}") is None
    assert load_capture(DATA / "fidelity/pythia/live.json").fusions
