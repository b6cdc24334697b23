"""The bytes a kernel must move and its share of the measured peak (issue #43), on recorded captures
and on records built here for the cases the recordings lack (said so at each)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from fusiondiff.io.store import load_capture
from fusiondiff.records.environment import PeakBandwidth
from fusiondiff.records.model import TensorMeta
from fusiondiff.records.traffic import (
    VENDOR_GBS,
    capture_traffic,
    compare_reported,
    furthest_from_peak,
    fusion_bytes,
    fusion_traffic,
    gathers,
    reached_bytes,
)

DATA = Path(__file__).resolve().parent.parent / "data"


def _peak(gbs: float) -> PeakBandwidth:
    return PeakBandwidth(gbs=gbs, best_gbs=gbs * 1.01, copy_bytes=1 << 30, copies=20, seconds=0.05)


def _tensor(
    index: int, shape: tuple[int, ...], stride: tuple[int, ...], dtype: str = "torch.bfloat16", **kw
) -> TensorMeta:
    return TensorMeta(index=index, kind="tensor", dtype=dtype, shape=shape, stride=stride, device="cuda:0", **kw)


def test_a_broadcast_dimension_is_read_once():
    assert reached_bytes(_tensor(0, (4, 1024, 128), (0, 0, 1), "torch.float32")) == 128 * 4
    assert reached_bytes(_tensor(0, (8, 16), (16, 1))) == 8 * 16 * 2
    cpu = TensorMeta(index=0, kind="tensor", dtype="torch.float64", shape=(), stride=(), device="cpu")
    assert reached_bytes(cpu) == 0


def test_the_seed_embedding_counts_only_the_rows_its_index_can_name():
    seed = load_capture(DATA / "seed" / "live_forward.json")
    embed = seed.fusions[0]
    assert gathers(embed.definition)[0].table == 1 and gathers(embed.definition)[0].index == 0
    figure = fusion_bytes(embed)
    idx, table, weight = embed.inputs
    # token ids 0..254: at most 255 distinct rows of the 4096-wide bf16 table, not its 128256 rows
    rows = int(idx.max_value - idx.min_value) + 1
    assert figure is not None
    assert figure.read == 4 * 1024 * 8 + rows * 4096 * 2 + 4096 * 2
    assert any("outputs not recorded" in note for note in figure.notes)


def test_a_multi_kernel_fusion_without_segment_counts_is_judged_whole():
    seed = load_capture(DATA / "seed" / "live_forward.json")
    rope = next(f for f in seed.fusions if len(f.kernels) == 3)
    (whole,) = fusion_traffic(rope, 4000.0)
    assert whole.kernel_order is None and whole.basis == "fusion"
    assert whole.time_ns == pytest.approx(sum(k.timing.median_ns for k in rope.kernels))
    assert any("lower bound" in note for note in whole.notes)


def test_percent_of_peak_needs_a_measured_peak_and_the_vendor_table_is_not_one():
    seed = load_capture(DATA / "seed" / "live_forward.json")
    assert seed.environment.peak_bandwidth is None and seed.environment.gpu_name in VENDOR_GBS
    assert all(t.percent_of_peak is None for t in capture_traffic(seed.fusions, seed.environment))
    measured = dataclasses.replace(seed.environment, peak_bandwidth=_peak(4000.0))
    traffic = capture_traffic(seed.fusions, measured)
    swiglu = next(t for t in traffic if "nvFusion3/" in t.fusion)
    assert swiglu.percent_of_peak == pytest.approx(100 * swiglu.bytes / swiglu.time_ns / 4000.0)
    assert swiglu.time_at_peak_ns == pytest.approx(swiglu.bytes / 4000.0)


def test_outputs_are_written_bytes():
    # built here: a one-kernel fusion of one input and one output, with a kernel of the seed's
    seed = load_capture(DATA / "seed" / "live_forward.json")
    swiglu = next(f for f in seed.fusions if f.name == "nvFusion3")
    out = _tensor(0, (4, 1024, 14336), (14680064, 14336, 1))
    record = dataclasses.replace(swiglu, outputs=(out,))
    figure = fusion_bytes(record)
    assert figure is not None and figure.written == 4 * 1024 * 14336 * 2 and figure.notes == ()


def test_furthest_from_peak_orders_by_time_to_win_times_calls():
    seed = load_capture(DATA / "seed" / "live_forward.json")
    env = dataclasses.replace(seed.environment, peak_bandwidth=_peak(4000.0))
    traffic = capture_traffic(seed.fusions, env)
    ranked = furthest_from_peak(traffic)
    wins = [t.headroom_ns for t in ranked]
    assert wins == sorted(wins, reverse=True) and len(ranked) == len(traffic)
    last = ranked[-1]
    assert furthest_from_peak(traffic, {last.fusion: 10**6})[0] is last


def test_nvfusers_bandwidth_disagrees_where_it_counts_a_table_whole():
    capture = load_capture(DATA / "timers" / "seed_train_step" / "nvfuser.json")
    env = dataclasses.replace(capture.environment, peak_bandwidth=_peak(4000.0))
    embed = capture.fusions[0]
    (traffic,) = fusion_traffic(embed, 4000.0)
    comparison = compare_reported(traffic, embed.kernels[0], embed)
    assert comparison is not None and comparison.theirs_percent > 100
    assert any("gathered-from input 1 whole" in r for r in comparison.reasons)
    assert any("peak is 4814 GB/s" in r for r in comparison.reasons)
    # a resize segment: nvFuser's count is the one used, and agrees with itself but for the peak
    rope = next(f for f in capture.fusions if len(f.kernels) == 3)
    segments = fusion_traffic(rope, env.peak_bandwidth.gbs)
    assert [t.basis for t in segments] == ["segment"] * 3
    agreeing = compare_reported(segments[1], rope.kernels[1], rope)
    assert agreeing is not None and agreeing.ours_bytes == agreeing.theirs_bytes
    # the first resize segment slices an input nvFuser counts whole: faster than the peak allows
    assert segments[0].above_peak


def test_an_environment_without_a_peak_reads_back(tmp_path):
    from fusiondiff.io.store import save_capture

    seed = load_capture(DATA / "seed" / "live_forward.json")
    env = dataclasses.replace(seed.environment, peak_bandwidth=_peak(4123.5))
    path = tmp_path / "c.json"
    save_capture(dataclasses.replace(seed, environment=env, fusions=seed.fusions[:1]), path)
    back = load_capture(path)
    assert back.environment.peak_bandwidth == env.peak_bandwidth
    assert load_capture(DATA / "seed" / "live_forward.json").environment.peak_bandwidth is None


def test_a_bad_peak_is_refused_in_one_line(tmp_path):
    import json

    from fusiondiff.records.errors import CaptureFormatError

    raw = json.loads((DATA / "seed" / "live_forward.json").read_text())
    raw["environment"]["peak_bandwidth"] = {"gbs": -1.0, "best_gbs": 1.0, "copy_bytes": 1, "copies": 1, "seconds": 0.1}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(CaptureFormatError, match="peak_bandwidth.gbs: -1.0 is not a bandwidth"):
        load_capture(path)
