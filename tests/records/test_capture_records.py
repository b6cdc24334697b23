"""Records: JSON round trip, derived statistics, and clear errors for foreign or newer files."""

from __future__ import annotations

import json
import math

import pytest

from fusiondiff.io.store import dumps_capture, load_capture, save_capture
from fusiondiff.records.codec import capture_from_jsonable, to_jsonable
from fusiondiff.records.definition import definition_hash
from fusiondiff.records.environment import Environment
from fusiondiff.records.errors import CaptureFormatError, FusionDiffError
from fusiondiff.records.kernel_names import parse_kernel_name
from fusiondiff.records.model import (
    SCHEMA_VERSION,
    Capture,
    FusionRecord,
    KernelRecord,
    LaunchConfig,
    Segment,
    Segmentation,
    TensorMeta,
    Timing,
    TimingProtocol,
    alignment_of,
)
from fusiondiff.records.thunder import ThunderFigure


def make_capture() -> Capture:
    """A small capture built in code (not a recording) to exercise the codec."""
    kernel = KernelRecord(
        name="nvfuser_inner_persistent_f0_c1_r0_g0",
        normalized_name="nvfuser_inner_persistent_g0",
        scheduler="inner_persistent",
        group_id=0,
        launch=LaunchConfig(grid=(4096, 1, 1), block=(128, 1, 1), shared_mem_bytes=256, registers_per_thread=40),
        timing=Timing(samples_ns=(19872.0, 19200.0, 19586.0)),
    )
    fusion = FusionRecord(
        name="nvFusion0",
        definition="def nvfuser_fusion(fd):\n    pass\n",
        definition_hash=definition_hash("def nvfuser_fusion(fd):\n    pass\n"),
        inputs=(
            TensorMeta(
                index=0,
                kind="tensor",
                dtype="torch.int64",
                shape=(4, 1024),
                stride=(1024, 1),
                storage_numel=4096,
                device="cuda:0",
                alignment_bytes=256,
                min_value=0,
                max_value=254,
            ),
            TensorMeta(index=1, kind="scalar", dtype="float", scalar_value="1e-05"),
        ),
        kernels=(kernel,),
        segmentation=Segmentation(segments=(Segment(group_id=0, scheduler="inner_persistent"),)),
        timing=Timing(samples_ns=(19872.0, 19200.0, 19586.0)),
        trace="forward",
        enable_options=("kernel_reuse",),
        cuda_sources={"nvfuser_inner_persistent_f0_c1_r0_g0": "__global__ void k() {}"},
    )
    return Capture(
        kind="live",
        environment=Environment(gpu_name="test", nvfuser_env={"NVFUSER_DISABLE": "kernel_reuse"}),
        protocol=TimingProtocol(samples=3, l2_mode="cold", flush_bytes=1 << 27),
        fusions=(fusion,),
        source="unit test",
        thunder_figures=(
            ThunderFigure("graph0_thunder_0_nvFusion0_forward", "WallTime", "nvfuser", 10001.0, "report.txt"),
        ),
    )


def test_round_trip_is_exact(tmp_path):
    capture = make_capture()
    path = save_capture(capture, tmp_path / "c.json")
    assert load_capture(path) == capture
    data = json.loads(path.read_text())
    assert data["schema_version"] == SCHEMA_VERSION
    # derived statistics are written for readers, and recomputed (not trusted) on load
    assert data["fusions"][0]["timing"]["summary"]["median_ns"] == 19586.0


def test_timing_statistics():
    t = Timing(samples_ns=(1.0, 2.0, 3.0, 4.0, 100.0))
    assert t.median_ns == 3.0
    assert t.min_ns == 1.0 and t.max_ns == 100.0
    assert t.iqr_ns == pytest.approx(2.0)
    assert Timing(samples_ns=(5.0,)).iqr_ns == 0.0
    assert math.isnan(Timing(samples_ns=()).median_ns)


def test_nan_statistics_are_written_as_null():
    data = to_jsonable(Timing(samples_ns=()))
    assert data["summary"]["median_ns"] is None
    json.dumps(data, allow_nan=False)


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"traceEvents": []}, "not a fusiondiff capture"),
        ([1, 2, 3], "not a fusiondiff capture"),
        ({"schema_version": SCHEMA_VERSION + 1}, "upgrade fusiondiff"),
        ({"schema_version": "1"}, "not an integer"),
        ({"schema_version": 0}, "not a known version"),
    ],
)
def test_foreign_and_newer_files_are_refused(payload, message):
    with pytest.raises(CaptureFormatError, match=message):
        capture_from_jsonable(payload)


def test_missing_and_mistyped_fields_name_the_place():
    data = json.loads(dumps_capture(make_capture()))
    del data["fusions"][0]["kernels"][0]["launch"]["grid"]
    with pytest.raises(CaptureFormatError, match=r"fusions\[0\]\.kernels\[0\]\.launch: missing field 'grid'"):
        capture_from_jsonable(data)
    data = json.loads(dumps_capture(make_capture()))
    data["fusions"][0]["call_count"] = "many"
    with pytest.raises(CaptureFormatError, match="call_count"):
        capture_from_jsonable(data)
    data = json.loads(dumps_capture(make_capture()))
    data["kind"] = "guess"
    with pytest.raises(CaptureFormatError, match="kind"):
        capture_from_jsonable(data)


def test_load_errors_are_one_line(tmp_path):
    with pytest.raises(FusionDiffError, match="no such file"):
        load_capture(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(CaptureFormatError, match="not JSON"):
        load_capture(tmp_path / "bad.json")
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(CaptureFormatError):
        load_capture(tmp_path / "bin.json")
    with pytest.raises(FusionDiffError, match="directory"):
        load_capture(tmp_path)


def test_save_replaces_atomically_and_leaves_no_temporaries(tmp_path):
    path = tmp_path / "c.json"
    save_capture(make_capture(), path)
    save_capture(make_capture(), path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("nvfuser_inner_persistent_f0_c1_r0_g0", ("nvfuser_inner_persistent_g0", "inner_persistent", 0)),
        ("nvf::nvfuser_resize_f3_c1_r2_g3(nvf::Tensor<nvf::__bfloat, 3, 3>)", ("nvfuser_resize_g3", "resize", 3)),
        ("nvfuser_pointwise_f12_c1_r0_g0", ("nvfuser_pointwise_g0", "pointwise", 0)),
        (
            "void at::native::vectorized_elementwise_kernel<4>(int)",
            ("void at::native::vectorized_elementwise_kernel<4>", None, None),
        ),
    ],
)
def test_parse_kernel_name(name, expected):
    assert parse_kernel_name(name) == expected


def test_alignment_and_definition_hash():
    assert alignment_of(0x7F0000000200) == 256
    assert alignment_of(0x7F0000000202) == 2
    assert alignment_of(0x7F0000000208) == 8
    assert definition_hash("a\n  b  \n\n") == definition_hash("a\n  b")
    assert definition_hash("a") != definition_hash("b")


def test_recording_options_travel_to_the_replay_child_as_json():
    """The options cross to the replay's child process as JSON, with the records' codec."""
    import json

    from fusiondiff.records.model import TimingProtocol
    from fusiondiff.records.options import RecordingOptions

    options = RecordingOptions(
        protocol=TimingProtocol(warmup=2, samples=12, l2_mode="warm"), only=("nvFusion3",), save_inputs=True
    )
    assert RecordingOptions.from_jsonable(json.loads(json.dumps(options.to_jsonable()))) == options
    assert RecordingOptions.from_jsonable({}) == RecordingOptions()
    with pytest.raises(CaptureFormatError, match=r"options\.protocol\.l2_mode"):
        RecordingOptions.from_jsonable({"protocol": {"l2_mode": "lukewarm"}})
