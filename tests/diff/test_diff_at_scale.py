"""The whole diff stays bounded at sizes a whole step reaches, and gives the answers of the exact
comparison it replaced: DeepDiff, which the differ no longer imports (with pandas, which it
imports, it cost a one-fusion diff 0.4 s), is the reference here."""

from __future__ import annotations

import gc
import random
import time

from deepdiff import DeepDiff

from fusiondiff.diff import core
from fusiondiff.diff.compare import RecordComparer
from fusiondiff.diff.core import diff
from fusiondiff.records.codec import to_jsonable

import synthetic as syn


def _deepdiff_fields(view_a, view_b) -> tuple[str, ...]:
    """What ``changed_fields`` answered before: every field DeepDiff reports, in field order."""
    tree = DeepDiff(to_jsonable(dict(view_a)), to_jsonable(dict(view_b)), view="tree", ignore_numeric_type_changes=True)
    found = {str(level.path(output_format="list")[0]) for levels in tree.values() for level in levels}
    return tuple(name for name, _ in view_a if name in found)


def _random_value(rng: random.Random):
    kind = rng.randrange(7)
    if kind == 0:
        return rng.choice(["pointwise", "reduction", "1.0", ""])
    if kind == 1:
        return tuple(rng.choice(["pointwise", "reduction"]) for _ in range(rng.randrange(5)))
    if kind == 2:
        return rng.choice([0, 1, 2, 1.0, 2.5, None])
    if kind == 3:
        return tuple(rng.choice([1, 2, 128, 1.0]) for _ in range(rng.randrange(4)))
    if kind == 4:
        return rng.choice([True, False])
    if kind == 5:
        return tuple(rng.choice(["a", 1, None]) for _ in range(rng.randrange(3)))
    return ()


def test_changed_fields_agree_with_deepdiff_on_every_kind_of_value() -> None:
    rng = random.Random(13)
    fields = [f"field{i}" for i in range(5)]
    for _ in range(2_000):
        view_a = tuple((name, _random_value(rng)) for name in fields)
        view_b = tuple((name, value if rng.random() < 0.5 else _random_value(rng)) for name, value in view_a)
        assert RecordComparer().changed_fields(view_a, view_b) == _deepdiff_fields(view_a, view_b), (view_a, view_b)


def _random_view(rng: random.Random) -> dict:
    """An environment-and-protocol view as ``compare_captures`` builds it, values drawn at random."""
    return {
        "environment": {f"e{i}": _random_value(rng) for i in range(rng.randrange(4))},
        "nvfuser_env": {f"V{i}": rng.choice(["1", "0"]) for i in range(rng.randrange(3))},
        "protocol": {"samples": rng.choice([30, 30.0, 10]), "l2_mode": rng.choice(["cold", "warm"])},
    }


def test_capture_level_changes_agree_with_deepdiff_two_keys_deep() -> None:
    from fusiondiff.diff.compare import _deep_changes

    rng = random.Random(7)
    for _ in range(2_000):
        view_a, view_b = (to_jsonable(_random_view(rng)) for _ in range(2))
        tree = DeepDiff(view_a, view_b, view="tree", ignore_numeric_type_changes=True)
        expected = {tuple(level.path(output_format="list")[:2]) for levels in tree.values() for level in levels}
        assert {tuple(p) for p in _deep_changes(view_a, view_b)} == expected, (view_a, view_b)


def test_a_fusion_of_20000_kernels_half_renamed_diffs_in_bounded_time() -> None:
    # Its segmentation lists 20,000 schedulers a side: DeepDiff aligned those with difflib, which
    # ran for more than ten minutes. The bound here is loose; the benchmark gives the figure.
    count = 20_000
    a = [syn.kernel("pointwise", g, order=g, n=3, seed=g) for g in range(count)]
    b = [syn.kernel("reduction" if g % 2 else "pointwise", g, order=g, n=3, seed=g) for g in range(count)]
    start = time.perf_counter()
    result = diff(syn.capture([syn.fusion(kernels=a)]), syn.capture([syn.fusion(kernels=b)], kind="replay"))
    assert time.perf_counter() - start < 60
    (pair,) = result.pairs
    assert [c.path for c in pair.changes] == ["segmentation"]
    assert len(pair.kernels) == count // 2
    assert len(pair.unmatched_kernels) == count


def test_the_cyclic_collector_is_paused_for_a_diff_and_left_as_it_was(monkeypatch) -> None:
    seen = []
    inner = core._diff

    def watched(*args, **kwargs):
        seen.append(gc.isenabled())
        return inner(*args, **kwargs)

    monkeypatch.setattr(core, "_diff", watched)
    capture = syn.capture([syn.fusion()])
    assert gc.isenabled()
    diff(capture, capture)
    assert gc.isenabled()
    gc.disable()
    try:
        diff(capture, capture)
        assert not gc.isenabled()  # a caller's choice is kept
    finally:
        gc.enable()
    assert seen == [False, False]


def test_what_a_paused_block_made_is_collected_later_and_a_callers_frozen_objects_stay_frozen() -> None:
    """On resuming, the block's objects go to the oldest generation unwalked (collector.collector_paused);
    a cycle among them is still garbage the next full collection frees."""
    import weakref

    from fusiondiff.records.collector import collector_paused

    class Node:
        pass

    with collector_paused():
        node = Node()
        node.self = node  # a cycle: only the cyclic collector frees it
        alive = weakref.ref(node)
        del node
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.collect()
    assert alive() is None
    # a program that froze its own objects (a forking server) keeps them frozen
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with collector_paused():
            pass
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
