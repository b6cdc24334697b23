"""Properties of the loader and the differ on generated valid records (hypothesis).

Records are built from the dataclasses of :mod:`fusiondiff.records.model` with every field drawn, any
text (control characters included) where the field is text, and values inside what
the rules on their fields (:mod:`fusiondiff.records.constraints`) accept. Sizes stay small so the suite stays fast.

A capture diffed with itself gets SAME for every fusion and exit code 0. It is also *comparable*
(no finding at all) when it was measured well enough to compare at all: the differ's
``measurement`` rule reports fewer than ``MIN_SAMPLES`` samples, samples that are all 0 ns, an SM
clock that moved during the samples and profiler trouble in a warning even when both sides are the
same record; such a finding explains no time, so it does not change the exit code. Captures
measured well are drawn by ``well_measured``.
"""

from __future__ import annotations

import contextlib
import io
import statistics
import tempfile
import typing
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fusiondiff.diff import diff
from fusiondiff.diff.stats import MIN_SAMPLES
from fusiondiff.front.cli import main
from fusiondiff.io.store import load_capture, save_capture
from fusiondiff.records.environment import Environment
from fusiondiff.records.model import (
    Capture,
    FusionRecord,
    KernelRecord,
    LaunchConfig,
    Segment,
    Segmentation,
    TensorMeta,
    TimerName,
    Timing,
    TimingProtocol,
)

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])

text = st.text(max_size=12)
quiet_text = st.text(st.characters(exclude_characters="cCkKpP"), max_size=12)
"""Text that cannot name profiler trouble (``cupti``, ``kernel``, ``profiler``...) in a warning."""
optional_text = st.none() | text
count = st.integers(min_value=0, max_value=2**63 - 1)
small = st.integers(min_value=0, max_value=4096)
optional_count = st.none() | count
duration = st.floats(min_value=0.0, max_value=1e12, allow_nan=False, allow_infinity=False)
finite = st.floats(allow_nan=False, allow_infinity=False)
dims = st.none() | st.tuples(small, small, small)
# what CUDA lets a launch be (fusiondiff.records.constraints): a block holds at most 1024 threads
block_dims = st.none() | st.tuples(st.integers(0, 64), st.integers(0, 16), st.integers(0, 1)) | st.just((1024, 1, 1))
cluster_dims = st.none() | st.tuples(st.integers(0, 16), st.integers(0, 16), st.integers(0, 16))
smem_bytes = st.none() | st.integers(min_value=0, max_value=2**20)
timing = st.builds(Timing, samples_ns=st.lists(duration, min_size=1, max_size=12).map(tuple))
launch = st.builds(
    LaunchConfig,
    grid=dims,
    block=block_dims,
    cluster=cluster_dims,
    shared_mem_bytes=smem_bytes,
    dynamic_smem_bytes=smem_bytes,
    static_smem_bytes=smem_bytes,
    registers_per_thread=st.none() | st.integers(min_value=0, max_value=255),
)
kernel = st.builds(
    KernelRecord,
    name=text,
    normalized_name=text,
    scheduler=optional_text,
    group_id=optional_count,
    launch=launch,
    timing=timing,
    order=count,
    source_hash=optional_text,
    stream=optional_count,
)


@st.composite
def tensor_meta(draw: st.DrawFn, index: int) -> TensorMeta:
    if draw(st.booleans()):
        return TensorMeta(index=index, kind="scalar", dtype=draw(text), scalar_value=draw(optional_text))
    rank = draw(st.integers(0, 4))
    low = draw(st.none() | finite)
    high = None if low is None else draw(st.floats(min_value=low, allow_nan=False, allow_infinity=False))
    return TensorMeta(
        index=index,
        kind="tensor",
        dtype=draw(text),
        shape=tuple(draw(st.lists(small, min_size=rank, max_size=rank))),
        stride=tuple(draw(st.lists(count, min_size=rank, max_size=rank))),
        storage_offset=draw(count),
        storage_numel=draw(count),
        device=draw(text),
        alignment_bytes=draw(count),
        is_contiguous=draw(st.booleans()),
        min_value=low,
        max_value=high,
        tensor_key=draw(optional_text),
    )


@st.composite
def fusion(draw: st.DrawFn, timing: st.SearchStrategy[Timing] = timing, well_measured: bool = False) -> FusionRecord:
    inputs = tuple(draw(tensor_meta(i)) for i in range(draw(st.integers(0, 3))))
    return FusionRecord(
        name=draw(text),
        definition=draw(st.text(max_size=200)),
        definition_hash=draw(text),
        inputs=inputs,
        kernels=tuple(draw(st.lists(kernel, max_size=3))),
        segmentation=Segmentation(
            segments=tuple(draw(st.lists(st.builds(Segment, group_id=count, scheduler=text), max_size=3))),
            source=draw(text),
        ),
        timing=draw(timing),
        call_count=draw(st.integers(1, 2**63 - 1)),
        trace=draw(optional_text),
        ops_summary=draw(optional_text),
        enable_options=tuple(draw(st.lists(text, max_size=2))),
        disable_options=tuple(draw(st.lists(text, max_size=2))),
        device_index=draw(small),
        repro_script=draw(optional_text),
        exact_constants=tuple(draw(st.lists(text, max_size=2))),
        cuda_sources=draw(st.dictionaries(text, text, max_size=2)),
        sm_clock_mhz=() if well_measured else tuple(draw(st.lists(small, max_size=2))),
        warnings=tuple(draw(st.lists(quiet_text if well_measured else text, max_size=2))),
    )


environment = st.builds(
    Environment,
    gpu_name=optional_text,
    compute_capability=optional_text,
    sm_count=st.none() | st.integers(min_value=0, max_value=4096),
    l2_bytes=optional_count,
    sm_clock_mhz=optional_count,
    max_sm_clock_mhz=optional_count,
    memory_clock_mhz=optional_count,
    driver_version=optional_text,
    cuda_version=optional_text,
    torch_version=optional_text,
    nvfuser_version=optional_text,
    thunder_version=optional_text,
    python_version=optional_text,
    fusiondiff_version=optional_text,
    hostname=optional_text,
    nvfuser_env=st.dictionaries(text, text, max_size=3),
    recorded_at=optional_text,
)
protocol = st.builds(
    TimingProtocol,
    method=st.sampled_from(typing.get_args(TimerName)),
    warmup=count,
    samples=count,
    l2_mode=st.sampled_from(["cold", "warm"]),
    flush_bytes=count,
    on_copies=st.booleans(),
)
captures = st.builds(
    Capture,
    kind=st.sampled_from(["live", "replay"]),
    environment=environment,
    protocol=protocol,
    fusions=st.lists(fusion(), min_size=1, max_size=3).map(tuple),
    source=text,
    tensors_file=optional_text,
    warnings=st.lists(text, max_size=2).map(tuple),
)
well_timed = st.builds(
    Timing,
    # measured: its median sample above 0 ns (a median of 0 ns is a fusion whose kernels were not timed)
    samples_ns=st.lists(duration, min_size=MIN_SAMPLES, max_size=MIN_SAMPLES + 5)
    .filter(lambda s: statistics.median(s) > 0)
    .map(tuple),
)
well_measured = st.builds(
    Capture,
    kind=st.sampled_from(["live", "replay"]),
    environment=environment,
    protocol=protocol,
    fusions=st.lists(fusion(well_timed, well_measured=True), min_size=1, max_size=3).map(tuple),
    source=text,
    tensors_file=optional_text,
    warnings=st.lists(quiet_text, max_size=2).map(tuple),
)


@SETTINGS
@given(captures)
def test_json_round_trip_is_exact(capture: Capture) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = save_capture(capture, Path(tmp) / "c.json")
        assert load_capture(path) == capture


@SETTINGS
@given(captures)
def test_every_fusion_of_a_capture_diffed_with_itself_is_same(capture: Capture) -> None:
    result = diff(capture, capture)
    assert len(result.pairs) == len(capture.fusions) and not result.unmatched
    # a fusion with under 3 samples or a median of 0 ns is not measured, on both sides alike: never SAME
    expected = ["SAME" if f.timing.count >= 3 and f.timing.median_ns > 0 else "NOT MEASURED" for f in capture.fusions]
    assert [p.timing.verdict for p in result.pairs] == expected
    assert not any(p.unmatched_kernels for p in result.pairs)
    assert all(k.timing.verdict in ("SAME", "NOT MEASURED") for p in result.pairs for k in p.kernels)
    # a weakness both sides share (few samples, missing events, a clock that moved) is no difference
    assert not result.findings, [f.rule for f in result.findings]
    assert result.exit_code() == (0 if "NOT MEASURED" not in expected else 3)
    assert result.same_speed == ("NOT MEASURED" not in expected)


@SETTINGS
@given(well_measured)
def test_a_well_measured_capture_diffed_with_itself_is_comparable(capture: Capture) -> None:
    result = diff(capture, capture)
    assert result.comparable, [(f.rule, f.evidence) for f in result.findings]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(captures)
def test_the_command_line_exits_0_for_a_capture_and_itself_or_3_where_nothing_was_measured(capture: Capture) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = str(save_capture(capture, Path(tmp) / "c.json"))
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["diff", path, path])
    measured = all(f.timing.count >= 3 and f.timing.median_ns > 0 for f in capture.fusions)
    assert code == (0 if measured else 3), err.getvalue()
    assert out.getvalue().startswith("kernel: same speed: " if measured else "kernel: kernel time not measured")
    assert all(line.isprintable() for line in out.getvalue().splitlines())
