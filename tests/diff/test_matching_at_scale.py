"""Matching stays bounded at sizes a whole training step reaches, and stays right."""

from __future__ import annotations

import difflib
import random

from fusiondiff.diff import match
from fusiondiff.diff.match import match_fusions, match_kernels
from fusiondiff.records.definition import canonical_definition

import synthetic as syn


def _in_order_and_equal(x, y, pairs):
    return all(x[i] == y[j] for i, j in pairs) and all(
        pairs[k][0] < pairs[k + 1][0] and pairs[k][1] < pairs[k + 1][1] for k in range(len(pairs) - 1)
    )


def test_long_kernel_sequences_with_half_renamed_pair_the_other_half() -> None:
    count = 4_000  # above the difflib bound (the benchmark runs 20,000)
    a = [syn.kernel("pointwise", g, order=g, n=3, seed=g) for g in range(count)]
    b = [syn.kernel("reduction" if g % 2 else "pointwise", g, order=g, n=3, seed=g) for g in range(count)]
    m = match_kernels(a, b)
    assert len(m.pairs) == count // 2
    assert all(a[i].normalized_name == b[j].normalized_name for i, j in m.pairs)
    assert len(m.only_a) == len(m.only_b) == count // 2


def test_long_sequences_of_few_names_align_in_order() -> None:
    names_a = [f"k{i % 5}" for i in range(3_000)]
    names_b = [n for i, n in enumerate(names_a) if i % 7]  # some launches gone
    pairs = match._align_long(names_a, names_b)
    assert _in_order_and_equal(names_a, names_b, pairs)
    assert len(pairs) >= 0.9 * len(names_b)


def test_bounded_alignment_is_always_in_order() -> None:
    rng = random.Random(3)
    saved = match._DIFFLIB_MAX_PRODUCT
    match._DIFFLIB_MAX_PRODUCT = 0  # every gap takes the anchors or the walk
    try:
        for _ in range(500):
            x = [rng.choice("abcdefgh") for _ in range(rng.randint(0, 30))]
            y = [rng.choice("abcdefghi") for _ in range(rng.randint(0, 30))]
            assert _in_order_and_equal(x, y, match._align_long(x, y))
    finally:
        match._DIFFLIB_MAX_PRODUCT = saved


def test_similarity_bound_never_below_difflib() -> None:
    rng = random.Random(4)
    for _ in range(300):
        la = "\n".join(f"    t{i} = fd.ops.op{rng.randint(0, 6)}(t0)" for i in range(rng.randint(1, 25)))
        lb = "\n".join(f"    t{i} = fd.ops.op{rng.randint(0, 6)}(t0)" for i in range(rng.randint(1, 25)))
        bound = match._Lines(la).ratio_bound(match._Lines(lb))
        quick = difflib.SequenceMatcher(
            None, canonical_definition(la).splitlines(), canonical_definition(lb).splitlines(), autojunk=False
        ).quick_ratio()
        assert bound >= quick - 1e-12


def test_drifted_long_definitions_pair_with_their_own() -> None:
    def definition(index: int, drift: bool) -> str:
        lines = ["def nvfuser_fusion(fd : FusionDefinition) -> None :"]
        lines.append("    t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False)")
        for k in range(1, 300):
            lines.append(f"    t{k} = fd.ops.mul(t{k - 1}, {index * 1000 + k}.0)")
        if drift:
            lines[5] = "    t4 = fd.ops.add(t3, 1.0)"
        lines.append("    fd.add_output(t299)")
        return "\n".join(lines) + "\n"

    a = [syn.fusion(f"nvFusion{i}", definition=definition(i, False)) for i in range(12)]
    b = [syn.fusion(f"fusion{i}", trace=None, definition=definition(i, True)) for i in reversed(range(12))]
    matches, left = match_fusions(a, b)
    assert not left
    assert {(m.index_a, 11 - m.index_b) for m in matches} == {(i, i) for i in range(12)}
    assert {m.matched_by for m in matches} == {"similar_definition"}
