"""The words of every rule's finding (:mod:`fusiondiff.report.words.wording`), on the cases of
tests/diff/test_rules.py (which checks their data): a line each case's first finding must read,
and every finding worded, the same again once read back from a diff record."""

from __future__ import annotations

import json
from typing import get_args

import pytest

from fusiondiff.diff import diff
from fusiondiff.diff.records import Finding
from fusiondiff.records.codec import to_jsonable
from fusiondiff.records.model import TimerName, TimingProtocol
from fusiondiff.report.formats.record import dumps_diff_record, report_from_record
from fusiondiff.report.interface import DiffReport
from fusiondiff.report.words import wording

from diff.test_rules import CASES, b_kernel, base_fusion, live, replay_of, seed_case

# A line of evidence each case's first finding must read.
EVIDENCE = {
    "input_alignment": "widest vector access: 8 element(s) in A, 1 element(s) in B",
    "storage_offset": "storage offset 0 element(s) in A, 1 in B",
    "input_strides": "stride: [4194304, 4096, 1] in A, [4096, 16384, 1] in B",
    "dtype_shape": "input 0 shape: [4, 1024, 4096] in A, [8, 1024, 4096] in B",
    "dtype_shape (input count)": "input 1 exists only in A",
    "index_value_range": "values [0, 254] in A, [0, 128255] in B",
    "scalar_value": "1e-05 in A, 1e-06 in B",
    "definition": "+v13 = fd.ops.sqrt(v12)",
    "constant_precision": "9.999999747378752e-06 is printed as 1.00000e-05 in B's definition (B ran with [1e-05])",
    "options": "enable_options: [] in A, [id_model] in B",
    "env_vars": "NVFUSER_DISABLE: unset in A, kernel_reuse in B",
    "runtime_env": "CUDA_LAUNCH_BLOCKING: unset in A, 1 in B: each launch waits for its kernel to end (changes host time)",
    "segmentation": "segments: inner_persistent in A (1 kernel(s)), pointwise+reduction in B (2 kernel(s))",
    "kernel_variant": "block 128x1x1 -> 512x1x1, registers_per_thread 40 -> 31",
    "cuda_source": "source sha256 aaaaaaaaaaaa in A, bbbbbbbbbbbb in B",
    "runtime_reuse": "c1_r0 in A, c1_r1 in B",
    "l2_mode": "L2 mode: cold in A, warm in B",
    "measurement (method)": "timing method: kineto in A, seed-sum-all-events in B",
    "measurement (few samples)": "3 sample(s) in B, fewer than 10",
    "measurement (CUPTI warning)": "B's capture warns: torch.profiler: CUPTI initialization failed",
    "clocks": "SM clock while timing: 1980 MHz in A, 1410 MHz in B",
    "versions": "nvfuser_version: 0.2.36 in A, 0.2.35 in B",
    "gpu": "gpu_name: synthetic GPU (not recorded) in A, synthetic other GPU in B",
    "flush_size": "L2 flush buffer: not recorded in A, 100.0 MiB in B (the protocol makes it twice the GPU's L2)",
    "unexplained": "no recorded property differs",
    "failed_execution": "compile error: RuntimeError: nvrtc: error",
    "index_out_of_range": "B's index input 0 of index_select holds [-9, 9], outside [0, 128256) of dim 0 of input 1 (128256 rows)",
    "view_past_storage": "reaches element 16777215 of a storage of 1024",
}


def words(f: Finding) -> tuple[str, tuple[str, ...]]:
    return wording.title(f), wording.evidence_lines(f)


@pytest.mark.parametrize(
    ("a", "b", "line"), [(a, b, EVIDENCE[name]) for name, a, b, _ in CASES], ids=[c[0] for c in CASES]
)
def test_each_rule_is_worded_from_its_data(a, b, line):
    capture_a, capture_b = a(), b()
    result = diff(capture_a, capture_b)
    lines = wording.evidence_lines(result.findings[0])
    assert any(line in text for text in lines), lines
    for f in result.findings:
        title, lines = words(f)
        assert title.strip() and lines and all(text.strip() for text in lines)
    if capture_b.protocol.method not in get_args(TimerName):
        return  # a record refuses a capture no recorder writes (the case's made-up method)
    # read back from a diff record (tuples as lists, NaN as null), the words are the same
    record = json.loads(dumps_diff_record(DiffReport(result, capture_a, capture_b)))
    again = report_from_record(record).result
    assert [words(f) for f in again.findings] == [words(f) for f in result.findings]


def test_the_seed_case_reads_alignment_and_the_variant():
    top, *rest = diff(*seed_case()).findings
    assert any("alignment: 256 B in A, 2 B in B" in line for line in wording.evidence_lines(top))
    assert any("below 16 B" in line for line in wording.evidence_lines(top))
    assert wording.title(top).endswith("starts at another storage offset (alignment 256 B vs 2 B)")
    variant = next(f for f in rest if f.rule == "kernel_variant")
    assert "block 128x1x1 -> 512x1x1" in wording.evidence_lines(variant)[0]


@pytest.mark.parametrize(
    "method, says",
    [
        ("seed-sum-of-all-events", "sums every profiler event of one call"),
        ("nvfuser", "both time kernels through CUPTI"),
    ],
)
def test_a_changed_timing_method_says_what_the_two_methods_measure(method, says):
    a = live(base_fusion())
    b = replay_of(base_fusion(kernels=[b_kernel()]), protocol=TimingProtocol(method=method))
    (finding,) = [f for f in diff(a, b).findings if f.rule == "measurement"]
    (line,) = [e for e in wording.evidence_lines(finding) if e.startswith("timing method:")]
    assert f"kineto in A, {method} in B" in line and says in line


def test_a_schema_1_finding_keeps_its_sentences():
    old = Finding(rule="storage_offset", role="cause", fusions=("f",), title="Input 0 moved", evidence=("a line",))
    assert words(old) == ("Input 0 moved", ("a line",))


def test_a_schema_1_record_is_still_rendered_with_its_sentences():
    from fusiondiff.report.formats.diff_text import render_diff_text

    a, b = seed_case()
    result = diff(a, b)
    record = json.loads(dumps_diff_record(DiffReport(result, a, b)))
    # a record as fusiondiff wrote it before findings were data: sentences, no data, no flag, and
    # (as until schema 4) capture B whole
    record["schema_version"] = 1
    record["captures"]["B"] = json.loads(json.dumps(to_jsonable(b)))
    del record["diff"]["b_from_roundtrip"]
    for f in record["diff"]["findings"]:
        f["title"] = f"as written: {f['title']}"
        del f["data"]
    for pair in record["diff"]["pairs"]:
        for change in pair["changes"]:
            del change["input_index"], change["attribute"]
    text = render_diff_text(report_from_record(record).result)
    assert "1. [storage_offset, cause] as written: Input 0 of nvFusion0 [forward] starts at" in text


def test_a_gap_within_what_moves_between_processes_is_same_and_no_unexplained_finding():
    """A fusion 2.4 % faster with nothing recorded apart (OLMo's round trip, recorded on the H200)
    is SAME, its floor above its gap, and no finding calls it unexplained (it was one, worded as
    "within what placement moves", and failed the gate); the synthetic unexplained case (25 us
    against about 19 us) is a finding, its gap beyond its floor."""
    import math
    from pathlib import Path

    from fusiondiff.io.store import load_capture

    olmo = Path(__file__).parent.parent / "data" / "newuser" / "olmo"
    result = diff(load_capture(olmo / "live.json"), load_capture(olmo / "rt" / "replay.json"))
    (small,) = [p for p in result.pairs if p.label.startswith("nvFusion1 ")]
    assert small.timing.verdict == "SAME" and 0.02 < abs(math.log(small.timing.ratio)) < small.timing.floor
    assert not any(small.label in f.fusions for f in result.findings if f.rule == "unexplained")
    case = next(c for c in CASES if c[0] == "unexplained")
    large = diff(case[1](), case[2]())
    finding = large.findings[0]
    assert finding.rule == "unexplained" and abs(math.log(large.pairs[0].timing.ratio)) > large.pairs[0].timing.floor
