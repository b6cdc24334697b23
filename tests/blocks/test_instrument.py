"""The probe as a text transform of nvFuser's own CUDA source (sources recorded on the H200)."""

from __future__ import annotations

import json
import re

import pytest

from fusiondiff.replay.timeline_probe import (
    HEADER_WORDS,
    Buffer,
    InstrumentError,
    instrument,
    kernel_names,
    record_words,
    uses_clusters,
)
from fusiondiff.replay.timeline_recording import full_source
from tests.blocks.conftest import BLOCKS, KERNEL, recorded_source

ADDRESS = 0x7F3A_1C00_0000
PROBE_LINE = re.compile(
    r"fusiondiff_block_probe::Probe<(0x[0-9a-f]+)ULL, (\d+)ULL, (\d+)ULL, (true|false)> fusiondiff_block_probe_;"
)


def _without_probe(text: str) -> str:
    """The source with the probe's struct and its objects taken out again."""
    start = text.index("\n// fusiondiff: block-level timeline probe")
    end = text.index("}  // namespace fusiondiff_block_probe\n") + len("}  // namespace fusiondiff_block_probe\n") + 1
    text = text[:start] + text[end:]
    return re.sub(r"\n  fusiondiff_block_probe::Probe<[^\n]*\n", "", text)


def test_a_recorded_source_gets_one_probe_at_the_first_line_of_its_kernel_and_is_otherwise_unchanged():
    source = recorded_source("rmsnorm")
    assert kernel_names(source) == [KERNEL]
    out = instrument(source, {KERNEL: Buffer(ADDRESS, 4096, 4)})
    assert out.count("struct Probe {") == 1
    assert out.index("namespace fusiondiff_block_probe") < out.index("__global__")
    body = out[out.index("__global__") :]
    first_statement = body[body.index("{") + 1 :].lstrip().splitlines()[0]
    assert PROBE_LINE.fullmatch(first_statement.strip()).groups() == (hex(ADDRESS), "4096", "4", "false")
    assert _without_probe(out) == source


def test_every_kernel_of_a_segmented_fusion_goes_into_one_file_with_the_headers_once():
    # nvFuser 0.2.36's intrinsic_code=True text holds the headers and the first segment's kernel
    # only (recorded: rope_resize holds g1); the three kernels are a capture's (tests/data/cuda_source)
    headers = recorded_source("rope_resize")
    assert kernel_names(headers) == ["nvfuser_resize_f0_c1_r0_g1"]
    recorded = json.loads((BLOCKS.parent / "cuda_source" / "live.json").read_text())["fusions"][0]["cuda_sources"]
    kernels = "\n".join(recorded.values())
    full = full_source(headers, kernels)
    names = kernel_names(full)
    assert names == ["nvfuser_resize_f0_c1_r0_g1", "nvfuser_resize_f0_c1_r0_g2", "nvfuser_resize_f0_c1_r0_g3"]
    assert full.count("typedef") == headers[: headers.index("__global__")].count("typedef")
    out = instrument(full, {name: Buffer(ADDRESS + 4096 * i, 16384 * (i + 1), 4) for i, name in enumerate(names)})
    lines = PROBE_LINE.findall(out)
    assert [(int(a, 16), int(c)) for a, c, _, _ in lines] == [
        (ADDRESS, 16384),
        (ADDRESS + 4096, 32768),
        (ADDRESS + 8192, 49152),
    ]
    assert _without_probe(out) == full


def test_a_kernel_with_grid_synchronization_is_instrumented_like_any_other():
    source = recorded_source("dependent_reductions")
    (name,) = kernel_names(source)
    assert "grid_sync" in source[source.index("__global__") :]
    out = instrument(source, {name: Buffer(ADDRESS, 264, 8)})
    assert PROBE_LINE.search(out).groups() == (hex(ADDRESS), "264", "8", "false")


def test_only_the_kernels_asked_for_get_the_probe():
    headers = recorded_source("rope_resize")
    recorded = json.loads((BLOCKS.parent / "cuda_source" / "live.json").read_text())["fusions"][0]["cuda_sources"]
    full = full_source(headers, "\n".join(recorded.values()))
    out = instrument(full, {"nvfuser_resize_f0_c1_r0_g2": Buffer(ADDRESS, 32768, 4)})
    assert len(PROBE_LINE.findall(out)) == 1
    g2 = out.index("void nvfuser_resize_f0_c1_r0_g2")
    assert PROBE_LINE.search(out, g2) is not None and PROBE_LINE.search(out, 0, g2) is None


def test_a_kernel_that_leaves_through_inline_exit_is_refused_naming_it():
    source = recorded_source("rmsnorm")
    body = source.index("{", source.index(KERNEL)) + 1
    leaving = source[:body] + '\n  if (threadIdx.x > 64) { asm volatile("exit;"); }' + source[body:]  # a modified copy
    with pytest.raises(InstrumentError, match=rf"^{KERNEL}: leaves through inline exit or trap"):
        instrument(leaving, {KERNEL: Buffer(ADDRESS, 4096, 4)})


@pytest.mark.parametrize(
    ("buffers", "message"),
    [
        ({"nvfuser_pointwise_f0_c1_r0_g0": Buffer(ADDRESS, 1, 1)}, "not defined in the source"),
        ({KERNEL: Buffer(ADDRESS + 4, 4096, 4)}, "not an 8-byte aligned device address"),
        ({KERNEL: Buffer(ADDRESS, 0, 4)}, "is not a grid"),
        ({KERNEL: Buffer(ADDRESS, 4096, 33)}, "is not a CUDA block"),
    ],
)
def test_impossible_buffers_are_refused_in_one_line(buffers, message):
    with pytest.raises(InstrumentError, match=message) as caught:
        instrument(recorded_source("rmsnorm"), buffers)
    assert "\n" not in str(caught.value)


def test_a_source_is_never_instrumented_twice():
    once = instrument(recorded_source("rmsnorm"), {KERNEL: Buffer(ADDRESS, 4096, 4)})
    with pytest.raises(InstrumentError, match="already carries"):
        instrument(once, {KERNEL: Buffer(ADDRESS, 4096, 4)})


def test_the_buffer_holds_a_header_and_one_record_per_cta_sized_from_the_launch():
    assert Buffer(ADDRESS, 4096, 16).words == HEADER_WORDS + 4096 * (4 + 16)
    assert record_words(4) == 8


def test_clusters_are_read_only_for_kernels_that_use_them():
    source = recorded_source("rmsnorm")
    assert not uses_clusters(source[source.index("__global__") :])
    out = instrument(source, {KERNEL: Buffer(ADDRESS, 4096, 4, cluster=True)})
    assert PROBE_LINE.search(out).group(4) == "true"
