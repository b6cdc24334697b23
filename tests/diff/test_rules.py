"""Every finding rule, firing and not firing, and the ranking of causes over consequences.

All captures here are constructed in code (:mod:`synthetic`, in tests/), not recorded. Side A
is the seed's RMSNorm fusion as a live session would record it; each case changes one thing in B.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from fusiondiff.diff import Finding, diff
from fusiondiff.diff.findings import RULES
from fusiondiff.diff.records import Evidence
from fusiondiff.records.codec import to_jsonable
from fusiondiff.records.model import (
    Capture,
    FusionFailure,
    FusionRecord,
    KernelRecord,
    LaunchConfig,
    TensorMeta,
    Timing,
    TimingProtocol,
)

import synthetic as syn

VARIANT_LAUNCH = LaunchConfig(grid=(4096, 1, 1), block=(512, 1, 1), shared_mem_bytes=0, registers_per_thread=31)


def base_fusion(**fields) -> FusionRecord:
    return syn.fusion("nvFusion0", **fields)


def live(fusion: FusionRecord | None = None, **capture_fields) -> Capture:
    return syn.capture([fusion or base_fusion()], source="synthetic: live", **capture_fields)


def replay_of(fusion: FusionRecord, **capture_fields) -> Capture:
    return syn.capture([fusion], kind="replay", source="synthetic: replay", **capture_fields)


def b_kernel(**kw) -> KernelRecord:
    """B's kernel: another seed than A's, so the samples differ as two runs do."""
    return syn.kernel(seed=kw.pop("seed", 11), **kw)


def with_input(index: int, **changes) -> FusionRecord:
    f = base_fusion(kernels=[b_kernel()])
    inputs = list(f.inputs)
    inputs[index] = dataclasses.replace(inputs[index], **changes)
    return dataclasses.replace(f, inputs=tuple(inputs))


def index_fusion(max_value: float, seed: int) -> FusionRecord:
    idx = syn.tensor(0, (4, 1024), "torch.int64", min_value=0, max_value=max_value)
    table = syn.tensor(1, (128256, 4096))
    return base_fusion(inputs=(idx, table), kernels=[syn.kernel(seed=seed)])


GATHER_DEFINITION = """\
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[4, 1024], contiguity=[True, True], dtype=DataType.Int, is_cpu=False)
    tv1 = fd.define_tensor(shape=[128256, 4096], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.ops.reshape(tv0, new_shape=[4096])
    tv3 = fd.ops.broadcast(tv2, is_broadcast_dim=[False, True])
    tv4 = fd.ops.index_select(tv1, tv3, dim=0)
    fd.add_output(tv4)
"""


def gather_fusion(low: float, high: float, failure: FusionFailure | None = None) -> FusionRecord:
    """An embedding gather: int64 ids [4, 1024] select rows of a [128256, 4096] table."""
    idx = syn.tensor(0, (4, 1024), "torch.int64", min_value=low, max_value=high)
    table = syn.tensor(1, (128256, 4096))
    fields = (
        {"kernels": [], "timing": Timing(samples_ns=()), "failure": failure} if failure else {"kernels": [syn.kernel()]}
    )
    return base_fusion(definition=GATHER_DEFINITION, inputs=(idx, table), **fields)


CRASH = FusionFailure(
    kind="illegal_address",
    message="RuntimeError: CUDA error: an illegal memory access was encountered",
    log_file="replay.log",
)


def _scalar(value: str) -> TensorMeta:
    return TensorMeta(index=2, kind="scalar", dtype="float", scalar_value=value)


def rules_of(findings: tuple[Finding, ...]) -> set[str]:
    return {f.rule for f in findings}


# (case, A capture, B capture, the rules that must fire: no other may)
CASES: list[tuple[str, Callable[[], Capture], Callable[[], Capture], set[str]]] = [
    ("input_alignment", live, lambda: replay_of(with_input(0, alignment_bytes=2)), {"input_alignment"}),
    ("storage_offset", live, lambda: replay_of(with_input(0, storage_offset=1, alignment_bytes=2)), {"storage_offset"}),
    (
        "input_strides",
        live,
        lambda: replay_of(with_input(0, stride=(4096, 16384, 1), is_contiguous=False)),
        {"input_strides"},
    ),
    (
        "dtype_shape",
        live,
        lambda: replay_of(with_input(0, shape=(8, 1024, 4096), stride=(4194304, 4096, 1))),
        {"dtype_shape"},
    ),
    (
        "dtype_shape (input count)",
        live,
        lambda: replay_of(base_fusion(inputs=syn.rmsnorm_inputs()[:1], kernels=[b_kernel()])),
        {"dtype_shape"},
    ),
    (
        "index_value_range",
        lambda: live(index_fusion(254, seed=0)),
        lambda: replay_of(index_fusion(128_255, seed=11)),
        {"index_value_range"},
    ),
    (
        "scalar_value",
        lambda: live(base_fusion(inputs=(*syn.rmsnorm_inputs(), _scalar("1e-05")))),
        lambda: replay_of(base_fusion(inputs=(*syn.rmsnorm_inputs(), _scalar("1e-06")), kernels=[b_kernel()])),
        {"scalar_value"},
    ),
    (
        "definition",
        live,
        lambda: replay_of(
            base_fusion(definition=syn.RMSNORM_DEFINITION.replace("rsqrt", "sqrt"), kernels=[b_kernel()])
        ),
        {"definition"},
    ),
    (
        "constant_precision",
        lambda: live(base_fusion(exact_constants=("9.999999747378752e-06",))),
        lambda: replay_of(base_fusion(exact_constants=("1e-05",), kernels=[b_kernel()])),
        {"constant_precision"},
    ),
    ("options", live, lambda: replay_of(base_fusion(enable_options=("id_model",), kernels=[b_kernel()])), {"options"}),
    (
        "env_vars",
        live,
        lambda: replay_of(
            base_fusion(kernels=[b_kernel()]),
            environment=dataclasses.replace(syn.SYNTHETIC_ENVIRONMENT, nvfuser_env={"NVFUSER_DISABLE": "kernel_reuse"}),
        ),
        {"env_vars"},
    ),
    (
        "runtime_env",
        lambda: live(environment=dataclasses.replace(syn.SYNTHETIC_ENVIRONMENT, runtime_env={})),
        lambda: replay_of(
            base_fusion(kernels=[b_kernel()]),
            environment=dataclasses.replace(syn.SYNTHETIC_ENVIRONMENT, runtime_env={"CUDA_LAUNCH_BLOCKING": "1"}),
        ),
        {"runtime_env"},
    ),
    (
        "segmentation",
        live,
        lambda: replay_of(
            base_fusion(
                kernels=[
                    b_kernel(scheduler="pointwise", group_id=0, median_ns=8_700),
                    b_kernel(scheduler="reduction", group_id=1, median_ns=8_700),
                ]
            )
        ),
        {"segmentation"},
    ),
    (
        "kernel_variant",
        live,
        lambda: replay_of(base_fusion(kernels=[b_kernel(launch=VARIANT_LAUNCH)])),
        {"kernel_variant"},
    ),
    (
        "cuda_source",
        lambda: live(base_fusion(kernels=[syn.kernel(source_hash="aa" * 32)])),
        lambda: replay_of(base_fusion(kernels=[b_kernel(source_hash="bb" * 32)])),
        {"cuda_source"},
    ),
    ("runtime_reuse", live, lambda: replay_of(base_fusion(kernels=[b_kernel(runtime=1)])), {"runtime_reuse"}),
    (
        "l2_mode",
        live,
        lambda: replay_of(base_fusion(kernels=[b_kernel()]), protocol=TimingProtocol(l2_mode="warm")),
        {"l2_mode"},
    ),
    (
        "measurement (method)",
        live,
        lambda: replay_of(base_fusion(kernels=[b_kernel()]), protocol=TimingProtocol(method="seed-sum-all-events")),
        {"measurement"},
    ),
    ("measurement (few samples)", live, lambda: replay_of(base_fusion(kernels=[b_kernel(n=3)])), {"measurement"}),
    (
        "measurement (CUPTI warning)",
        live,
        lambda: replay_of(
            base_fusion(kernels=[b_kernel()]),
            warnings=("torch.profiler: CUPTI initialization failed; no kernel events recorded",),
        ),
        {"measurement"},
    ),
    (
        "clocks",
        live,
        lambda: replay_of(
            base_fusion(kernels=[b_kernel()]),
            environment=dataclasses.replace(syn.SYNTHETIC_ENVIRONMENT, sm_clock_mhz=1410),
        ),
        {"clocks"},
    ),
    (
        "versions",
        live,
        lambda: replay_of(
            base_fusion(kernels=[b_kernel()]),
            environment=dataclasses.replace(syn.SYNTHETIC_ENVIRONMENT, nvfuser_version="0.2.35"),
        ),
        {"versions"},
    ),
    (
        "gpu",
        live,
        lambda: replay_of(
            base_fusion(kernels=[b_kernel()]),
            environment=dataclasses.replace(syn.SYNTHETIC_ENVIRONMENT, gpu_name="synthetic other GPU"),
        ),
        {"gpu"},
    ),
    (
        "flush_size",
        live,
        lambda: dataclasses.replace(
            replay_of(base_fusion(kernels=[b_kernel()])),
            protocol=dataclasses.replace(TimingProtocol(), flush_bytes=100 * 2**20),
        ),
        {"flush_size"},
    ),
    ("unexplained", live, lambda: replay_of(base_fusion(kernels=[b_kernel(median_ns=25_000)])), {"unexplained"}),
    (
        "failed_execution",
        live,
        lambda: replay_of(
            base_fusion(
                kernels=[],
                timing=Timing(samples_ns=()),
                failure=FusionFailure("compile_error", "RuntimeError: nvrtc: error"),
            )
        ),
        {"failed_execution"},
    ),
    (
        "index_out_of_range",
        lambda: live(gather_fusion(0, 128_255)),
        lambda: replay_of(gather_fusion(-9, 9, CRASH)),
        {"index_out_of_range", "failed_execution", "index_value_range"},
    ),
    (
        "view_past_storage",
        live,
        lambda: replay_of(
            dataclasses.replace(
                with_input(0, storage_numel=1024),
                kernels=(),
                timing=Timing(samples_ns=()),
                failure=CRASH,
            )
        ),
        {"view_past_storage", "failed_execution"},
    ),
]


ANY = object()
"""A value the case does not check."""

# A piece of evidence each case's first finding must hold: (field, A's value, B's value[, subject]),
# values as in JSON (lists). The words for them are checked in tests/report/test_finding_words.py.
DATA: dict[str, tuple[object, ...]] = {
    "input_alignment": ("widest_vector", 8, 1),
    "storage_offset": ("storage_offset", 0, 1),
    "input_strides": ("stride", [4194304, 4096, 1], [4096, 16384, 1]),
    "dtype_shape": ("shape", [4, 1024, 4096], [8, 1024, 4096]),
    "dtype_shape (input count)": ("input", ANY, None),
    "index_value_range": ("max_value", 254, 128255),
    "scalar_value": ("scalar_value", "1e-05", "1e-06"),
    "definition": ("definition_diff", None, None, "+v13 = fd.ops.sqrt(v12)"),
    "constant_precision": ("rounded_in_b", "9.999999747378752e-06", "1.00000e-05"),
    "options": ("enable_options", [], ["id_model"]),
    "env_vars": ("nvfuser_env.NVFUSER_DISABLE", None, "kernel_reuse"),
    "runtime_env": ("runtime_env.CUDA_LAUNCH_BLOCKING", None, "1"),
    "segmentation": ("schedulers", ["inner_persistent"], ["pointwise", "reduction"]),
    "kernel_variant": ("launch.block", [128, 1, 1], [512, 1, 1], "nvfuser_inner_persistent_g0"),
    "cuda_source": ("source_hash", "aa" * 32, "bb" * 32),
    "runtime_reuse": ("runtime", 0, 1),
    "l2_mode": ("l2_mode", "cold", "warm"),
    "measurement (method)": ("protocol.method", "kineto", "seed-sum-all-events"),
    "measurement (few samples)": ("samples", None, 3, "nvFusion0 [forward]"),
    "measurement (CUPTI warning)": (
        "capture_warning",
        None,
        "torch.profiler: CUPTI initialization failed; no kernel events recorded",
    ),
    "clocks": ("timed_sm_clock_mhz", 1980, 1410),
    "versions": ("nvfuser_version", "0.2.36", "0.2.35"),
    "gpu": ("gpu_name", ANY, "synthetic other GPU"),
    "flush_size": ("protocol.flush_bytes", ANY, 100 * 2**20),
    "unexplained": ("verdict", "SLOWER", "SLOWER"),
    "failed_execution": ("failure_kind", None, "compile_error"),
    "index_out_of_range": ("index_range", ANY, [-9, 9], "index_select"),
    "view_past_storage": ("reach", None, [16777215, 1024]),
}


def holds(finding: Finding, field: str, a: object, b: object, subject: object = ANY) -> bool:
    """The finding has evidence ``field`` with these values (as JSON has them) and subject."""
    return any(
        e.field == field
        and (a is ANY or to_jsonable(e.a) == a)
        and (b is ANY or to_jsonable(e.b) == b)
        and (subject is ANY or e.subject == subject)
        for e in finding.data
    )


@pytest.mark.parametrize(
    ("a", "b", "expected", "evidence"),
    [(a, b, expected, DATA[name]) for name, a, b, expected in CASES],
    ids=[c[0] for c in CASES],
)
def test_each_rule_fires_alone(a, b, expected, evidence):
    result = diff(a(), b())
    assert rules_of(result.findings) == expected
    assert holds(result.findings[0], *evidence), result.findings[0].data
    assert not result.comparable
    for f in result.findings:
        assert f.data and not f.title and not f.evidence  # data only: the words are the report's
        assert f.fusions == ("nvFusion0 [forward]",)


def test_every_registered_rule_has_a_case():
    covered = {rule for case in CASES for rule in case[3]}
    # the block level's rules have theirs in tests/blocks/test_findings.py, the environment's and the
    # host's in tests/environment/test_findings.py (and test_host_confirmed.py)
    apart = ("fusiondiff.diff.rules_blocks", "fusiondiff.diff.rules_environment", "fusiondiff.diff.rules_host")
    blocks = {rule.__name__ for rule in RULES if rule.__module__ in apart}
    assert blocks and {rule.__name__ for rule in RULES} - blocks <= covered


def test_identical_runs_give_no_findings_and_are_comparable():
    a = live()
    b = replay_of(base_fusion(kernels=[b_kernel()]))
    result = diff(a, b)
    assert result.findings == ()
    assert result.warnings == ()
    assert result.pairs[0].timing.verdict == "SAME"
    assert result.comparable
    assert diff(a, a).comparable


def test_idle_clock_at_recording_start_is_not_a_measurement_difference():
    # seen on the H200: a script captured in a fresh process reads 345 MHz before its first kernel;
    # the clocks read around the samples (1980 MHz on both sides) are what the samples ran at
    idle = dataclasses.replace(syn.SYNTHETIC_ENVIRONMENT, sm_clock_mhz=345)
    a = live(base_fusion(sm_clock_mhz=(1980, 1980)), environment=idle)
    b = replay_of(base_fusion(kernels=[b_kernel()], sm_clock_mhz=(1980, 1980)))
    result = diff(a, b)
    assert result.findings == () and result.warnings == () and result.comparable
    slower = replay_of(base_fusion(kernels=[b_kernel()], sm_clock_mhz=(1410, 1410)))
    (finding,) = diff(a, slower).findings
    assert finding.rule == "clocks"
    assert holds(finding, "timed_sm_clock_mhz", 1980, 1410)


def test_history_in_the_fusion_index_alone_is_not_a_finding():
    # A session compiled other fusions first (f7); a one-fusion script always says f0.
    a = live(base_fusion(kernels=[syn.kernel(fusion_index=7)]))
    result = diff(a, replay_of(base_fusion(kernels=[b_kernel(fusion_index=0)])))
    assert result.pairs[0].kernels[0].name_a != result.pairs[0].kernels[0].name_b
    assert result.findings == ()


def test_unknown_launch_fields_are_not_differences():
    unknown = LaunchConfig(
        grid=(4096, 1, 1), block=(128, 1, 1), cluster=None, shared_mem_bytes=None, registers_per_thread=40
    )
    known = LaunchConfig(
        grid=(4096, 1, 1), block=(128, 1, 1), cluster=(1, 1, 1), shared_mem_bytes=0, registers_per_thread=40
    )
    a = live(base_fusion(kernels=[syn.kernel(launch=unknown)]))
    result = diff(a, replay_of(base_fusion(kernels=[b_kernel(launch=known)])))
    assert result.findings == ()


def seed_case() -> tuple[Capture, Capture]:
    """Storage offset 1 (2-byte aligned) in B, another kernel variant from another runtime, 1.48x."""
    a = live()
    inputs = with_input(0, storage_offset=1, alignment_bytes=2).inputs
    b = replay_of(base_fusion(inputs=inputs, kernels=[b_kernel(median_ns=25_860, runtime=1, launch=VARIANT_LAUNCH)]))
    return a, b


def test_storage_offset_case_ranks_the_input_cause_first():
    result = diff(*seed_case())
    assert result.pairs[0].timing.verdict == "SLOWER"
    top, *rest = result.findings
    assert top.rule == "storage_offset" and top.rank == 1 and top.role == "cause"
    assert holds(top, "alignment_bytes", 256, 2)
    assert holds(top, "narrow_vectors", 16, 16)
    by_rule = {f.rule: f for f in rest}
    assert set(by_rule) == {"kernel_variant", "runtime_reuse"}
    assert "input_alignment" not in by_rule  # folded into storage_offset (policy)
    assert sorted(top.supported_by) == sorted(f.rank for f in rest)
    for f in rest:
        assert f.caused_by == (1,)
        assert f.kernels == ("nvFusion0 [forward]/nvfuser_inner_persistent_g0",)
    assert top.explained_ns == pytest.approx(result.pairs[0].timing.gap_ns)
    variant = by_rule["kernel_variant"]
    assert holds(variant, "launch.block", [128, 1, 1], [512, 1, 1], "nvfuser_inner_persistent_g0")


def test_consequence_never_outranks_its_cause_even_when_kernel_gaps_sum_higher():
    # Kernel g0 is 8 us slower, g1 2 us faster: the variants explain |8| + |2| = 10 us of kernel
    # time, more than the fusion's 6 us gap, and must still rank below the offset that caused them.
    a = live(
        base_fusion(
            kernels=[syn.kernel("pointwise", 0, median_ns=10_000), syn.kernel("reduction", 1, median_ns=10_000, seed=3)]
        )
    )
    inputs = with_input(0, storage_offset=1, alignment_bytes=2).inputs
    kernels = (
        b_kernel(scheduler="pointwise", group_id=0, median_ns=18_000, launch=VARIANT_LAUNCH),
        b_kernel(scheduler="reduction", group_id=1, median_ns=8_000, launch=VARIANT_LAUNCH, seed=12),
    )
    result = diff(a, replay_of(base_fusion(inputs=inputs, kernels=kernels)))
    top, second = result.findings
    assert (top.rule, second.rule) == ("storage_offset", "kernel_variant")
    assert second.caused_by == (1,) and top.supported_by == (2,)
    # the gap is counted once: the cause explains it, the variant is its evidence
    assert top.explained_ns == pytest.approx(abs(result.pairs[0].timing.gap_ns))
    assert second.explained_ns == 0.0


def test_protocol_difference_invalidates_the_whole_gap_and_ranks_first():
    a, b = seed_case()
    b = dataclasses.replace(b, protocol=TimingProtocol(l2_mode="warm"))
    a = dataclasses.replace(a, environment=dataclasses.replace(a.environment, l2_bytes=60 * 2**20))
    result = diff(a, b)
    assert result.findings[0].rule == "l2_mode"
    assert holds(result.findings[0], "input_bytes", 33562624, 33562624, "nvFusion0 [forward]")
    assert holds(result.findings[0], "l2_bytes", 60 * 2**20, 60 * 2**20)
    assert result.findings[1].rule == "storage_offset"
    # two root causes of one fusion's gap: the data cannot tell their shares apart, so they share it
    gap = result.ledger("kernel").gap_ns
    assert [(e.causes, e.explained_ns) for e in result.ledger("kernel").entries] == [
        (("l2_mode", "storage_offset"), gap)
    ]
    assert any("timing protocols differ" in w for w in result.warnings)


def test_constant_precision_flags_the_printed_rounding_not_equal_values():
    a = live(base_fusion(exact_constants=("1e-05",)))
    assert diff(a, replay_of(base_fusion(exact_constants=("1e-05",), kernels=[b_kernel()]))).findings == ()
    lossy = diff(
        live(base_fusion(exact_constants=("9.999999747378752e-06",))), replay_of(base_fusion(kernels=[b_kernel()]))
    )
    (finding,) = lossy.findings
    assert finding.data[0] == Evidence("rounded_in_b", "9.999999747378752e-06", "1.00000e-05", "text")
    assert holds(finding, "exact_constants", ["9.999999747378752e-06"], [])


def test_zero_samples_are_reported_as_missing_kernel_events():
    zeros = syn.kernel(timing=Timing(samples_ns=(0.0,) * 30))
    result = diff(live(), replay_of(base_fusion(kernels=[zeros])))
    measurement = next(f for f in result.findings if f.rule == "measurement")
    assert holds(measurement, "zero_samples", None, 30, "nvFusion0 [forward]")


def test_different_gpu_is_a_warning_and_a_finding():
    other = dataclasses.replace(syn.SYNTHETIC_ENVIRONMENT, gpu_name="synthetic other GPU", l2_bytes=96 * 2**20)
    result = diff(live(), replay_of(base_fusion(kernels=[b_kernel()]), environment=other))
    assert rules_of(result.findings) == {"gpu"}
    assert any("different GPUs" in w for w in result.warnings)


def test_compensating_kernels_are_an_unexplained_finding():
    # One kernel 4 us slower, the other 4 us faster: the fusion's sum does not move.
    a = live(
        base_fusion(
            kernels=[syn.kernel("pointwise", 0, median_ns=10_000), syn.kernel("reduction", 1, median_ns=10_000, seed=3)]
        )
    )
    kernels = [
        b_kernel(scheduler="pointwise", group_id=0, median_ns=14_000),
        b_kernel(scheduler="reduction", group_id=1, median_ns=6_000, seed=12),
    ]
    result = diff(a, replay_of(base_fusion(kernels=kernels)))
    (finding,) = result.findings
    assert finding.rule == "unexplained"
    assert len(finding.kernels) == 2
    assert {k.timing.verdict for k in result.pairs[0].kernels} == {"SLOWER", "FASTER"}
    assert not result.comparable


def test_int32_overflowing_indices_are_called_out():
    result = diff(live(index_fusion(254, seed=0)), replay_of(index_fusion(2**31 + 5, seed=11)))
    assert holds(result.findings[0], "beyond_int32", 2**31 - 1, 2**31 - 1)


def test_nan_samples_do_not_crash_and_are_not_measured():
    nan_kernel = syn.kernel(timing=Timing(samples_ns=(float("nan"),) * 12))
    result = diff(live(), replay_of(base_fusion(kernels=[nan_kernel])))
    assert result.pairs[0].timing.verdict == "NOT MEASURED"
    assert "NaN" in result.pairs[0].timing.reason
    assert not result.comparable and result.exit_code() == 3


def test_empty_capture_is_a_diff_error():
    from fusiondiff.records.errors import DiffError

    empty = dataclasses.replace(live(), fusions=())
    with pytest.raises(DiffError, match="holds no fusions"):
        diff(live(), empty)
    with pytest.raises(DiffError, match="capture A"):
        diff(empty, live())
