"""The fast capture decoder builds what the reference decoder builds, and defers to it on doubt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fusiondiff import codec, model
from fusiondiff.validate import validate_capture

DATA = Path(__file__).parent / "data"
RECORDED = sorted(DATA.glob("fidelity/*/*.json"))


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
    ],
)
def test_fast_decoder_defers_what_the_reference_refuses(change) -> None:
    data = json.loads((DATA / "fidelity/pythia/live.json").read_text())
    change(data)
    assert codec.try_decode_capture(data) is None
    with pytest.raises(model.CaptureFormatError):
        model.capture_from_jsonable(data, "live.json")
