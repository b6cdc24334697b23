"""The diff renderers (text and JSON) and the `fusiondiff diff` command's exit codes.

Captures are constructed in code (:mod:`synthetic`, in tests/), never recorded. Text outputs
are compared whole after replacing every decimal number by ``N``, as the times are seeded noise.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from fusiondiff.diff import diff
from fusiondiff.front.api import diff_files
from fusiondiff.front.cli import main
from fusiondiff.io.store import save_capture
from fusiondiff.records.codec import to_jsonable
from fusiondiff.records.model import SCHEMA_VERSION, LaunchConfig, Timing
from fusiondiff.report.formats.diff_text import render_diff_json, render_diff_text

import synthetic as syn

OFFSET_LAUNCH = LaunchConfig(grid=(4096, 1, 1), block=(512, 1, 1), shared_mem_bytes=0, registers_per_thread=31)


def normalised_spaces(text: str) -> str:
    """The text with its wrapped lines joined (the terminal width wraps the verdict line)."""
    return re.sub(r"\n +", " ", text)


def normalised(text: str) -> str:
    return re.sub(r"\d+\.\d+(?:e[-+]\d+)?", "N", text)


def live():
    return syn.capture([syn.fusion()], source="synthetic: live")


def same_replay():
    return syn.capture([syn.fusion(kernels=[syn.kernel(seed=11)])], kind="replay", source="synthetic: replay")


def offset_replay():
    inputs = (syn.tensor(0, (4, 1024, 4096), storage_offset=1, alignment_bytes=2), syn.tensor(1, (4096,)))
    kernel = syn.kernel(median_ns=25_860, runtime=1, seed=11, launch=OFFSET_LAUNCH)
    return syn.capture([syn.fusion(inputs=inputs, kernels=[kernel])], kind="replay", source="synthetic: replay")


def unrelated():
    idx = syn.tensor(0, (4, 1024), "torch.int64", min_value=0, max_value=254)
    return syn.capture(
        [syn.fusion("nvFusion7", definition="def other(fd):\n    pass\n", inputs=(idx,))], source="synthetic: other"
    )


COMPARABLE_TEXT = """\
kernel: same speed: the 1 matched fusion(s) SAME within noise (+-N %); recorded properties identical
host: fd.execute's host time was not measured on both sides
fidelity: B runs what A ran (definition, constants, inputs, options and variables as recorded)
A (live): synthetic: live
B (replay): synthetic: replay

fusions
  fusion / kernel           A median us   B median us      B/A     floor  verdict (B vs A)
  nvFusion0 [forward]             N         N    Nx   +-N %  SAME
  B/A: B's median over A's (above 1: B is slower); floor: the smallest gap (log ratio) these data can show between two processes, SAME within it, - where nothing was measured

kernel time (passes, gated by default): no gap to apportion
"""

OFFSET_TEXT = """\
kernel: B is Nx slower: N us in A, N us in B (beyond the +-N % two processes can differ by; spread calibrated: H200 10-50 us, the largest at this size: none for synthetic GPU (not recorded)); recorded properties differ: 3 finding(s), explaining N us of the N us gap
host: fd.execute's host time was not measured on both sides
fidelity: B runs 1 thing(s) differently from A: storage_offset (N us of kernel time)
A (live): synthetic: live
B (replay): synthetic: replay

fusions
  fusion / kernel           A median us   B median us      B/A     floor  verdict (B vs A)
  nvFusion0 [forward]             N         N    Nx   +-N %  SLOWER
  B/A: B's median over A's (above 1: B is slower); floor: the smallest gap (log ratio) these data can show between two processes, SAME within it, - where nothing was measured

kernel time (fails, gated by default): gap N us: storage_offset N us
  1. [storage_offset, cause] Input 0 of nvFusion0 [forward] starts at another storage offset (alignment 256 B vs 2 B)  (explains N us)
       input 0 (bfloat16[4, 1024, 4096]): storage offset 0 element(s) in A, 1 in B
       data pointer alignment: 256 B in A, 2 B in B (widest vector access: 8 element(s) in A, 1 element(s) in B)
       below 16 B nvFuser cannot use its widest vector loads for this input, and the alignment is part of its input cache key: another kernel variant follows
       nvFuser's own repro script builds fresh tensors at offset 0: the offset is lost there
       supported by: #2 kernel_variant, #3 runtime_reuse
  2. [kernel_variant, consequence] nvFusion0 [forward] launches another kernel variant (launch configuration)  (evidence for #1)
       nvfuser_inner_persistent_g0: block 128x1x1 -> 512x1x1, registers_per_thread 40 -> 31 (N us -> N us)
       follows from: #1 storage_offset
  3. [runtime_reuse, consequence] nvFusion0 [forward] kernels come from another runtime cache history  (evidence for #1)
       nvfuser_inner_persistent_g0: c1_r0 in A, c1_r1 in B (nvfuser_inner_persistent_f0_c1_r0_g0 vs nvfuser_inner_persistent_f0_c1_r1_g0)
       a runtime index above 0 means the process compiled other runtimes of this fusion before (other inputs) and nvFuser picked among them by history; NVFUSER_DISABLE=kernel_reuse on both sides rules reuse out
       follows from: #1 storage_offset

repro fidelity (fails, gated with --strict): gap N us: storage_offset N us
"""


def test_comparable_text_says_so():
    assert normalised(render_diff_text(diff(live(), same_replay()))) == COMPARABLE_TEXT


def test_offset_text_ranks_the_cause_with_units():
    text = render_diff_text(diff(live(), offset_replay()))
    assert normalised(text) == OFFSET_TEXT
    assert "17.40" in text and "1.48x" in text


def test_unmatched_and_warnings_are_listed():
    text = render_diff_text(diff(live(), unrelated()))
    assert "kernel: A and B run different programs: none of A's 1 fusion(s) has the definition or the" in text
    assert "  A: nvFusion0 [forward] (17.40 us median): only in A" in text
    assert "  B: nvFusion7 [forward] (17.40 us median): only in B" in text
    assert "warnings\n  nothing matched" in text


def test_kernel_rows_and_unmatched_kernels_show_under_their_fusion():
    a = syn.capture(
        [
            syn.fusion(
                kernels=[
                    syn.kernel("pointwise", 0, median_ns=6_000),
                    syn.kernel("reduction", 1, median_ns=6_000, seed=2),
                ]
            )
        ]
    )
    b = syn.capture([syn.fusion(kernels=[syn.kernel("pointwise", 0, median_ns=9_000, seed=3)])])
    text = normalised(render_diff_text(diff(a, b)))
    assert "    nvfuser_pointwise_g0           N          N    Nx   +-N %  SLOWER" in text
    assert "    nvfuser_reduction_g1: only in A (N us median)" in text


def test_many_same_fusions_are_counted_not_listed():
    shapes = [(n, 1024, 4096) for n in range(1, 26)]
    fusions = [
        syn.fusion(f"nvFusion{n}", inputs=(syn.tensor(0, s), syn.tensor(1, (4096,)))) for n, s in enumerate(shapes)
    ]
    text = render_diff_text(diff(syn.capture(fusions), syn.capture(fusions)))
    # the 20 that take longest are listed (equal synthetic medians: the first 20), the rest counted
    assert "... 5 more fusion(s) SAME, not listed (the JSON record has all: --json)" in text
    listed = [line.split()[0] for line in text.splitlines() if line.startswith("  nvFusion")]
    assert listed == [f"nvFusion{n}" for n in range(20)]
    slow = [
        dataclasses.replace(f, timing=Timing(samples_ns=syn.samples(50_000))) if f.name == "nvFusion24" else f
        for f in fusions
    ]
    text = render_diff_text(diff(syn.capture(slow), syn.capture(slow)))
    assert "  nvFusion24 [forward]" in text and "  nvFusion19 [forward]" not in text


def test_json_is_the_whole_record_with_the_verdict_and_no_nan():
    result = diff(live(), offset_replay())
    data = json.loads(render_diff_json(result))
    assert (data["same_speed"], data["properties_identical"], data["comparable"], data["exit_code"]) == (
        False,
        False,
        False,
        1,
    )
    assert data["verdict"].startswith("B is 1.48x slower: 17.40 us in A, 25.82 us in B")
    assert [f["rule"] for f in data["findings"]] == ["storage_offset", "kernel_variant", "runtime_reuse"]
    assert data["findings"][0]["explained_ns"] > 0 and data["findings"][1]["explained_ns"] == 0
    assert data["pairs"][0]["kernels"][0]["changes"][0] == {
        "path": "launch.block", "a": [128, 1, 1], "b": [512, 1, 1], "category": "launch",
        "kernel": "nvfuser_inner_persistent_g0", "input_index": None, "attribute": None,
    }  # fmt: skip
    assert data["pairs"][0]["timing"]["count_b"] == 30 and data["pairs"][0]["failed"] == []


def test_json_writes_missing_medians_as_null():
    empty_samples = syn.kernel(timing=Timing(samples_ns=()))
    b = syn.capture([syn.fusion(kernels=[empty_samples])])
    text = render_diff_json(diff(live(), b))
    assert "NaN" not in text and "Infinity" not in text
    data = json.loads(text)
    assert data["pairs"][0]["timing"]["median_b_ns"] is None
    assert data["pairs"][0]["timing"]["ratio"] is None
    assert data["pairs"][0]["timing"]["verdict"] == "NOT MEASURED"


# ---- the command line


def write(tmp_path, name, capture):
    return str(save_capture(capture, tmp_path / name))


def test_cli_exit_0_when_same_speed_and_identical(tmp_path, capsys):
    code = main(["diff", write(tmp_path, "a.json", live()), write(tmp_path, "b.json", same_replay())])
    assert code == 0
    assert re.search(
        r"same speed: the 1 matched fusion\(s\) SAME within noise \(\+-\d+\.\d %\); recorded properties identical",
        normalised_spaces(capsys.readouterr().out),
    )


def test_cli_exit_0_for_a_difference_that_explains_no_time_unless_strict(tmp_path, capsys):
    a = syn.capture([syn.fusion("nvFusion0", exact_constants=("1.4142135623730951",))])
    b = syn.capture(
        [syn.fusion("nvFusion0", exact_constants=("1.41421",), kernels=[syn.kernel(seed=11)])], kind="replay"
    )
    paths = [write(tmp_path, "a.json", a), write(tmp_path, "b.json", b)]
    assert main(["diff", *paths]) == 0
    out = " ".join(capsys.readouterr().out.split())  # wrapped at 100 columns (issue #41)
    assert "same speed" in out and "but explain no measurable time" in out
    assert "[constant_precision, cause]" in out and "(explains no measurable time)" in out
    assert main(["diff", *paths, "--strict"]) == 1


def test_cli_exit_1_on_a_finding_and_writes_json(tmp_path, capsys):
    out = tmp_path / "diff.json"
    code = main(
        ["diff", write(tmp_path, "a.json", live()), write(tmp_path, "b.json", offset_replay()), "--json", str(out)]
    )
    assert code == 1
    assert "1. [storage_offset, cause]" in capsys.readouterr().out
    record = json.loads(out.read_text())
    assert record["schema_version"] == 4 and record["record"] == "fusiondiff diff"
    assert record["diff"]["findings"][0]["rule"] == "storage_offset" and record["exit_code"] == 1
    assert set(record["sides"]) == {"A", "B"} and record["captures"]["A"]["protocol"]["samples"] == 30
    assert len(record["captures"]["A"]["fusions"][0]["timing"]["samples_ns"]) == 30


def test_cli_exit_1_when_nothing_matched_and_json_on_stdout(tmp_path, capsys):
    code = main(["diff", write(tmp_path, "a.json", live()), write(tmp_path, "b.json", unrelated()), "--format", "json"])
    assert code == 1
    data = json.loads(capsys.readouterr().out)["diff"]
    assert data["pairs"] == [] and len(data["unmatched"]) == 2


def test_cli_exit_2_on_an_empty_capture_in_one_line(tmp_path, capsys):
    empty = dataclasses.replace(live(), fusions=())
    code = main(["diff", write(tmp_path, "a.json", live()), write(tmp_path, "b.json", empty)])
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "capture B" in err and "b.json" in err and "holds no fusions" in err


def test_cli_exit_2_on_a_newer_schema_without_traceback(tmp_path, capsys):
    newer = tmp_path / "newer.json"
    data = to_jsonable(live())
    data["schema_version"] = SCHEMA_VERSION + 1
    newer.write_text(json.dumps(data))
    code = main(["diff", write(tmp_path, "a.json", live()), str(newer)])
    assert code == 2
    err = capsys.readouterr().err
    assert "upgrade fusiondiff" in err and "Traceback" not in err


def test_cli_exit_2_on_a_missing_file(tmp_path, capsys):
    assert main(["diff", write(tmp_path, "a.json", live()), str(tmp_path / "nope.json")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_diff_files_names_the_sources(tmp_path):
    anonymous = dataclasses.replace(live(), source="")
    path_a = write(tmp_path, "a.json", anonymous)
    path_b = write(tmp_path, "b.json", same_replay())
    result = diff_files(path_a, path_b)
    assert result.source_a == path_a
    assert result.source_b == f"{path_b} (synthetic: replay)"
    assert (result.label_a, result.label_b) == ("A (live)", "B (replay)")


def test_differ_and_renderer_run_without_torch():
    import subprocess
    import sys

    # A finder that refuses torch (sys.modules['torch'] = None would break scipy's own probe).
    # The record builders live in tests/, which is not installed: put it on the path.
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})\n"
        "class NoTorch:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'torch':\n"
        "            raise ImportError('torch is blocked')\n"
        "sys.meta_path.insert(0, NoTorch())\n"
        "import synthetic as syn\n"
        "from fusiondiff.diff import diff\n"
        "from fusiondiff.report.formats.diff_text import render_diff_text\n"
        "a = syn.capture([syn.fusion()])\n"
        "b = syn.capture([syn.fusion(kernels=[syn.kernel(median_ns=30000, seed=1)])])\n"
        "print(render_diff_text(diff(a, b)).splitlines()[0])\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("kernel: B is 1.72x slower")
    assert "nothing recorded explains the gap" in result.stdout


def test_a_long_list_of_unmatched_fusions_is_cut_to_forty_with_a_count_of_the_rest():
    from fusiondiff.report.formats.diff_text import MAX_UNMATCHED

    # two live sessions, the second ran 2 of the first's 45 fusions: 43 are only in A
    a = syn.capture([syn.fusion(f"nvFusion{i}") for i in range(45)])
    b = syn.capture([syn.fusion(f"nvFusion{i}") for i in range(2)])
    result = diff(a, b)
    assert len(result.unmatched) == 43 and not result.b_replays_subset
    text = render_diff_text(result)
    block = text.split("unmatched fusions\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(block) == MAX_UNMATCHED + 1 and all(line.startswith("  A: nvFusion") for line in block[:-1])
    assert block[-1] == f"  ... {43 - MAX_UNMATCHED} more in the JSON record (--json FILE)"
