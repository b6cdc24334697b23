"""Pairing fusions and kernels, on records constructed in code (not recorded)."""

from __future__ import annotations

import dataclasses

import pytest

from fusiondiff.diff import diff
from fusiondiff.diff.match import match_fusions, match_kernels

import synthetic as syn

LAYERNORM_DEFINITION = syn.RMSNORM_DEFINITION.replace("fd.ops.rsqrt(T20)", "fd.ops.sqrt(T20)")


def test_identical_fusions_pair_by_definition_and_inputs():
    a = [syn.fusion("nvFusion0"), syn.fusion("nvFusion1", definition=LAYERNORM_DEFINITION)]
    b = [syn.fusion("nvFusion1", definition=LAYERNORM_DEFINITION), syn.fusion("nvFusion0")]
    matches, left = match_fusions(a, b)
    assert [(m.index_a, m.index_b, m.matched_by) for m in matches] == [
        (0, 1, "definition_and_inputs"),
        (1, 0, "definition_and_inputs"),
    ]
    assert left == []


def test_replay_names_pair_by_definition_and_shapes_when_layout_differs():
    live = syn.fusion("nvFusion0", trace="forward")
    offset = dataclasses.replace(live.inputs[0], storage_offset=1, alignment_bytes=2)
    replay = syn.fusion("fusion0", trace=None, inputs=(offset, live.inputs[1]))
    result = diff(syn.capture([live]), syn.capture([replay], kind="replay"))
    (pair,) = result.pairs
    assert pair.matched_by == "definition_and_shapes"
    assert pair.label == "nvFusion0 [forward] vs fusion0"
    assert result.unmatched == ()


def test_same_definition_other_shape_pairs_when_unique():
    big = syn.tensor(0, (8, 1024, 4096))
    matches, _ = match_fusions([syn.fusion()], [syn.fusion(inputs=(big, syn.tensor(1, (4096,))))])
    assert [m.matched_by for m in matches] == ["definition"]


def test_same_name_and_trace_with_another_definition_is_paired_not_dropped():
    result = diff(syn.capture([syn.fusion()]), syn.capture([syn.fusion(definition=LAYERNORM_DEFINITION)]))
    (pair,) = result.pairs
    assert pair.matched_by == "name"
    assert pair.definition_diff == (
        "-v13 = fd.ops.rsqrt(v12)",
        "+v13 = fd.ops.sqrt(v12)",
    )
    assert [f.rule for f in result.findings] == ["definition"]


def test_similar_definition_under_another_name_is_paired():
    drifted = syn.RMSNORM_DEFINITION.replace("fd.ops.reciprocal(S16)", "fd.ops.reciprocal(S16)  # drifted")
    live = syn.fusion("nvFusion0", trace="forward")
    replay = syn.fusion("fusion0", trace=None, definition=drifted)
    matches, left = match_fusions([live], [replay])
    assert [m.matched_by for m in matches] == ["similar_definition"]
    assert left == []


def test_unrelated_captures_match_nothing_and_say_why():
    idx = syn.tensor(0, (4, 1024), "torch.int64", min_value=0, max_value=254)
    other = syn.fusion("nvFusion7", definition="def other(fd):\n    T0 = fd.ops.embedding(T0)\n", inputs=(idx,))
    result = diff(syn.capture([syn.fusion("nvFusion0")]), syn.capture([other]))
    assert result.pairs == ()
    assert [(u.side, u.name, u.reason) for u in result.unmatched] == [
        ("A", "nvFusion0", "only in A"),
        ("B", "nvFusion7", "only in B"),
    ]
    assert any("nothing matched" in w for w in result.warnings)
    assert not result.comparable


def test_same_name_other_definition_and_dtypes_stays_unmatched_with_reason():
    idx = syn.tensor(0, (4, 1024), "torch.int64", min_value=0, max_value=254)
    other = syn.fusion("nvFusion0", definition="def other(fd):\n    pass\n", inputs=(idx,))
    result = diff(syn.capture([syn.fusion("nvFusion0")]), syn.capture([other]))
    assert result.pairs == ()
    assert all(u.reason.startswith("same name but different definition") for u in result.unmatched)


def test_extra_fusion_with_a_shared_definition_is_reported_not_dropped():
    small = (syn.tensor(0, (2, 1024, 4096)), syn.tensor(1, (4096,)))
    a = syn.capture([syn.fusion("nvFusion0"), syn.fusion("nvFusion3", inputs=small)])
    b = syn.capture([syn.fusion("nvFusion0")])
    result = diff(a, b)
    assert [p.label for p in result.pairs] == ["nvFusion0 [forward]"]
    (left,) = result.unmatched
    assert (left.side, left.name) == ("A", "nvFusion3")
    assert "share its definition" in left.reason
    assert any("1 fusion(s) only in A" in w for w in result.warnings)
    assert not result.comparable


def test_repeated_labels_are_made_unique():
    shapes = [(4, 1024, 4096), (2, 1024, 4096)]
    fusions = [syn.fusion(inputs=(syn.tensor(0, s), syn.tensor(1, (4096,)))) for s in shapes]
    result = diff(syn.capture(fusions), syn.capture(fusions))
    assert [p.label for p in result.pairs] == ["nvFusion0 [forward]", "nvFusion0 [forward] #2"]


def test_kernels_with_equal_sequences_pair_in_launch_order():
    a = [syn.kernel("pointwise", 1, order=1), syn.kernel("reduction", 0, order=0)]
    b = [syn.kernel("reduction", 0, order=0), syn.kernel("pointwise", 1, order=1)]
    m = match_kernels(a, b)
    assert m.pairs == ((1, 0), (0, 1))
    assert m.only_a == m.only_b == ()


def test_segmentation_change_aligns_kernels_and_reports_the_rest():
    a = [syn.kernel("resize", 0), syn.kernel("resize", 1), syn.kernel("resize", 2)]
    b = [
        syn.kernel("resize", 0),
        syn.kernel("inner_persistent", 1),
        syn.kernel("resize", 2),
        syn.kernel("pointwise", 3),
    ]
    m = match_kernels(a, b)
    assert [(a[i].normalized_name, b[j].normalized_name) for i, j in m.pairs] == [
        ("nvfuser_resize_g0", "nvfuser_resize_g0"),
        ("nvfuser_resize_g2", "nvfuser_resize_g2"),
    ]
    assert [a[i].normalized_name for i in m.only_a] == ["nvfuser_resize_g1"]
    assert [b[j].normalized_name for j in m.only_b] == ["nvfuser_inner_persistent_g1", "nvfuser_pointwise_g3"]


@pytest.mark.parametrize("count_b", [1, 3])
def test_kernel_count_change_is_reported_in_the_pair(count_b):
    a = syn.fusion(kernels=[syn.kernel("pointwise", 0, median_ns=6_000), syn.kernel("reduction", 1, median_ns=6_000)])
    kernels_b = [syn.kernel("pointwise", g, median_ns=12_000 / count_b, seed=g + 5) for g in range(count_b)]
    result = diff(syn.capture([a]), syn.capture([syn.fusion(kernels=kernels_b)]))
    (pair,) = result.pairs
    assert [k.normalized_name for k in pair.kernels] == ["nvfuser_pointwise_g0"]
    assert {k.side for k in pair.unmatched_kernels} == ({"A"} if count_b == 1 else {"A", "B"})
    assert len(pair.unmatched_kernels) == 1 + (count_b - 1)
    assert "segmentation" in [f.rule for f in result.findings]
