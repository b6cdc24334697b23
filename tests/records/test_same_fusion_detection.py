"""Same-fusion detection across prints, on definitions recorded on the H200."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from fusiondiff.io.store import load_capture
from fusiondiff.recording.nvfuser_adapter import canonical_source, source_hashes
from fusiondiff.records.definition import canonical_definition, definition_hash, structural_hash

DATA = Path(__file__).parent.parent / "data"


@pytest.fixture(scope="module")
def seed_pairs():
    live = load_capture(DATA / "seed" / "live_forward.json")
    replay = load_capture(DATA / "seed" / "replay_forward.json")
    return list(zip(live.fusions, replay.fusions))


def test_live_and_rebuilt_prints_of_every_seed_fusion_have_one_structure(seed_pairs):
    assert len(seed_pairs) == 13
    for live, replay in seed_pairs:
        assert structural_hash(live.definition) == structural_hash(replay.definition), live.name


def test_renaming_alone_is_canonical_but_reordering_and_casts_need_the_structure(seed_pairs):
    live, replay = seed_pairs[0]  # nvFusion0: the rebuilt print only renumbers values
    assert definition_hash(live.definition) == definition_hash(replay.definition)
    assert live.definition != replay.definition
    live, replay = seed_pairs[1]  # nvFusion1: reordered, with no-op casts added by the round trip
    assert canonical_definition(live.definition) != canonical_definition(replay.definition)
    assert "DataType.Index" in replay.definition and "DataType.Index" not in live.definition


def test_a_real_change_changes_the_structure(seed_pairs):
    live, _ = seed_pairs[0]
    assert "rsqrt" in live.definition
    changed = live.definition.replace("fd.ops.rsqrt(", "fd.ops.sqrt(")
    assert structural_hash(changed) != structural_hash(live.definition)
    wider = live.definition.replace("dtype=DataType.BFloat16)", "dtype=DataType.Float)", 1)
    assert structural_hash(wider) != structural_hash(live.definition)
    lines = live.definition.rstrip().splitlines()
    assert lines[-1].strip().startswith("fd.add_output(") and lines[-2].strip().startswith("fd.add_output(")
    swapped = "\n".join(lines[:-2] + [lines[-1], lines[-2]])
    assert structural_hash(swapped) != structural_hash(live.definition)  # outputs keep their order


def test_graph_hashes_of_recorded_definitions_are_those_fusiondiff_always_computed():
    # The hash is shown in diffs and compared across fusiondiff versions: a faster way to compute
    # it (statements and node digests kept per text) must give the same hashes.
    names = (
        "seed/live_forward.json",
        "seed/replay_forward.json",
        "fidelity/llama3/live.json",
        "fidelity/llama3/replay.json",
    )
    hashes = [structural_hash(f.definition) for name in names for f in load_capture(DATA / name).fusions]
    assert len(hashes) == 78
    assert hashlib.sha256("\n".join(hashes).encode()).hexdigest()[:16] == "4ee299ba2ee72eb2"


def test_unparseable_text_still_hashes():
    assert structural_hash("not a definition") == structural_hash("not a definition  \n")
    assert structural_hash("not a definition").startswith("text:")


def test_canonical_source_ignores_history_and_tensor_numbering():
    a = "__global__ void nvfuser_inner_persistent_f0_c1_r0_g0(Tensor<float, 3, 3> T0, Tensor<float, 1, 1> T21) { T21[0] = T0[0]; }"
    b = "__global__ void nvfuser_inner_persistent_f3_c1_r2_g0(Tensor<float, 3, 3> T0, Tensor<float, 1, 1> T12) { T12[0] = T0[0]; }"
    c = b.replace("T12[0] = T0[0]", "T12[0] = T0[1]")
    assert canonical_source(a) == canonical_source(b)
    assert source_hashes({"k": a}) == source_hashes({"k": b}) != source_hashes({"k": c})


def test_canonical_source_ignores_codegen_local_numbering_but_not_types():
    a = "void k() { nvfuser_index_t i3; i3 = 8 * threadIdx.x; bool b7; b7 = i3 == 0; int64_t x; }"
    b = "void k() { nvfuser_index_t i5; i5 = 8 * threadIdx.x; bool b9; b9 = i5 == 0; int64_t x; }"
    c = b.replace("int64_t", "int32_t")
    assert canonical_source(a) == canonical_source(b) != canonical_source(c)


def test_a_fusion_matches_on_the_graph_hash_its_capture_recorded_with_this_algorithm(seed_pairs, tmp_path):
    import dataclasses

    from fusiondiff.io.store import dumps_capture
    from fusiondiff.records.definition import GRAPH_HASH_TAG, tagged_structural_hash

    live, _ = seed_pairs[0]
    computed = structural_hash(live.definition)
    assert live.graph_hash is None and live.structure_hash == computed  # a file from before #28
    recorded = dataclasses.replace(live, graph_hash=tagged_structural_hash(live.definition))
    assert recorded.graph_hash == GRAPH_HASH_TAG + computed and recorded.structure_hash == computed
    # the recorded hash is what the differ matches on: it is not computed again
    planted = dataclasses.replace(live, graph_hash=GRAPH_HASH_TAG + "f" * 32)
    assert planted.structure_hash == "f" * 32
    # another algorithm's hash (a later or earlier fusiondiff) is not used: the graph is hashed again
    foreign = dataclasses.replace(live, graph_hash="graph0:" + "f" * 32)
    assert foreign.structure_hash == computed
    # nor text that is not such a hash (reports show the structure hash)
    for text in ("\x1b[31m<script>alert(1)</script>", "f" * 31, "F" * 32, "f" * 32 + "\n"):
        hostile = dataclasses.replace(live, graph_hash=GRAPH_HASH_TAG + text)
        assert hostile.structure_hash == computed, text
    # the field survives a write and a read
    capture = load_capture(DATA / "seed" / "live_forward.json")
    path = tmp_path / "c.json"
    path.write_text(dumps_capture(dataclasses.replace(capture, fusions=(recorded,))))
    assert load_capture(path).fusions[0].graph_hash == recorded.graph_hash
