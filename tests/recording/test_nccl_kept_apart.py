"""Under DDP/FSDP: NCCL's kernels are kept apart from fusion time, and a rank's recording never
waits for the whole device (issue #17). No GPU, no process group: the recorded Kineto trace of an
H200 probe (tests/data/h200_probe) with one NCCL kernel added to it in code (SYNTHETIC, marked
where it is added), and fakes for torch.cuda.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from fusiondiff.front import live
from fusiondiff.recording.kineto import parse_trace
from fusiondiff.recording.timing import kernel_records
from fusiondiff.records.distributed import RankInfo, _synchronize, communication_apart, is_communication_kernel

PROBE = Path(__file__).parent.parent / "data" / "h200_probe" / "kineto_trace.json"
NCCL = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


@pytest.mark.parametrize(
    ("name", "communication"),
    [
        (NCCL, True),
        ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", True),  # NCCL before 2.19
        ("ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)", True),
        ("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", True),
        ("nvf::nvfuser_inner_persistent_f0_c1_r0_g0(nvf::Tensor<nvf::__bfloat, 3, 3>)", False),
        ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<unsigned char> >(int)", False),
        ("nvfuser_pointwise_f3_c1_r0_g0", False),
    ],
)
def test_communication_kernels_are_told_by_name(name: str, communication: bool) -> None:
    assert is_communication_kernel(name) is communication


def _with_nccl_in_sample(trace: dict, sample: int) -> dict:
    """SYNTHETIC: the recorded trace plus one NCCL all-reduce launched on the sampling thread inside
    sample ``sample``'s range, run on another stream (as DDP's reducer hook would launch it)."""
    trace = copy.deepcopy(trace)
    events = trace["traceEvents"]
    window = next(e for e in events if e.get("name") == f"fusiondiff/sample/{sample}")
    correlation = 1 + max(e.get("args", {}).get("correlation", 0) or 0 for e in events)
    events.append(
        {
            "ph": "X",
            "cat": "cuda_runtime",
            "name": "cudaLaunchKernel",
            "pid": window["pid"],
            "tid": window["tid"],
            "ts": window["ts"] + 1.0,
            "dur": 2.0,
            "args": {"correlation": correlation},
        }
    )
    events.append(
        {
            "ph": "X",
            "cat": "kernel",
            "name": NCCL,
            "pid": 0,
            "tid": 13,
            "ts": window["ts"] + 3.0,
            "dur": 41.5,
            "args": {"correlation": correlation, "stream": 13, "grid": [2, 1, 1], "block": [640, 1, 1]},
        }
    )
    return trace


def test_an_nccl_kernel_in_a_sample_is_kept_apart_from_the_fusion() -> None:
    recorded = json.loads(PROBE.read_text())
    clean_kernels, clean_timing, clean_warnings = kernel_records(parse_trace(recorded, 3))

    run = parse_trace(_with_nccl_in_sample(recorded, 1), 3)
    assert NCCL in [k.name for k in run.samples[1]]  # the trace attributes it to the sample...
    kernels, timing, warnings = kernel_records(run)
    # ...and the records do not: same kernels, same fusion time, as without the collective
    assert kernels == clean_kernels
    assert timing == clean_timing
    assert [k.name for k in kernels] == ["nvfuser_inner_persistent_f0_c1_r0_g0"]
    assert len(warnings) == len(clean_warnings) + 1
    assert warnings[-1] == (
        "communication kernels ran in the sampled window, recorded here and kept apart from the fusion's "
        "kernels and time: ncclDevKernel_AllReduce_Sum_bf16_RING_LL x1 (median 41.50 us)"
    )


def test_nothing_to_set_apart_says_nothing() -> None:
    run = parse_trace(json.loads(PROBE.read_text()), 3)
    samples, note = communication_apart(run.samples)
    assert samples == run.samples and note is None


class _FakeStream:
    def __init__(self, calls: list[str]) -> None:
        self.calls = calls

    def synchronize(self) -> None:
        self.calls.append("stream")


class _FakeTorchCuda:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def synchronize(self) -> None:
        self.calls.append("device")

    def current_stream(self) -> _FakeStream:
        return _FakeStream(self.calls)


def test_under_a_process_group_only_the_fusions_stream_is_waited_for() -> None:
    cuda = _FakeTorchCuda()
    _synchronize(cuda, grouped=True)
    _synchronize(cuda, grouped=False)
    assert cuda.calls == ["stream", "device"]


def test_a_rank_times_its_fusions_when_the_block_ends() -> None:
    assert live.timing_mode(None) == "inline"
    assert live.timing_mode(RankInfo(rank=1, local_rank=1, world_size=2)) == "deferred"


def test_an_empty_capture_says_whether_thunder_ran_any_region() -> None:
    seen = live._Seen()
    assert "Thunder ran no nvFusion region" in live._why_none(object, seen)
    assert "inductor or eager" in live._why_none(object, seen)
    seen.regions = 4
    assert "Thunder called 4 nvFusion region(s), but no FusionDefinition.execute" in live._why_none(object, seen)
    assert "Thunder is not installed" in live._why_none(None, seen)
