"""Pairing the fusions of two captures, and the kernels of two paired fusions.

Fusions are paired in passes, strongest evidence first; each pass only sees what the earlier
passes left:

1. ``definition_and_inputs``: same definition hash and same input signature (what nvFuser's input
   cache distinguishes).
2. ``definition_and_shapes``: same definition hash, same input kinds, dtypes and shapes (strides,
   offsets or alignment differ: the typical live-versus-repro case).
3. ``definition``: same definition hash, exactly one such fusion left on each side.
4. ``name``: same name and trace (``nvFusion0`` of the forward pass), exactly one on each side,
   with the same input kinds and dtypes: the definition changed, and a ``definition`` finding will
   say how. The dtype condition keeps two unrelated programs' ``nvFusion0`` apart.
5. ``similar_definition``: same input shapes and printed definitions at least 90 % alike, one best
   candidate each (a repro script whose definition drifted, under another name).
6. ``same_inputs``: the only fusion left on each side with these input kinds, dtypes and shapes
   (a one-fusion repro of another definition, such as a wrapper's other FusionDefinition); a
   ``definition`` finding says what differs.

Within a group of equally good candidates, fusions of the same name and trace pair first, then in
capture order. Whatever is left is reported as unmatched with the reason, never dropped.

Kernels of a pair are matched by normalized name (scheduler and segment group), in launch order.
When the sequences differ (segmentation changed) they are aligned with ``difflib``; kernels outside
the aligned blocks are reported as unmatched.
"""

from __future__ import annotations

import difflib
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass

from fusiondiff.definition import canonical_definition
from fusiondiff.diff.model import MatchedBy, Side
from fusiondiff.model import FusionRecord, KernelRecord

SIMILAR_DEFINITION_RATIO = 0.9
"""Pass 5 pairs definitions at least this alike (``difflib`` ratio over lines)."""
_MAX_SIMILARITY_CANDIDATES = 10_000
"""Pass 5 compares every left-over A with every left-over B of the same shapes; above this many
comparisons it is skipped, since thousands of left-overs mean the captures are unrelated anyway."""


@dataclass(frozen=True)
class FusionMatch:
    """Indices of a paired fusion in A's and B's ``Capture.fusions``, and the pass that paired them."""

    index_a: int
    index_b: int
    matched_by: MatchedBy


@dataclass(frozen=True)
class FusionLeftOver:
    """A fusion no pass could pair, and why."""

    side: Side
    index: int
    reason: str


@dataclass(frozen=True)
class KernelMatch:
    """Result of :func:`match_kernels`: positions in the fusions' ``kernels`` tuples."""

    pairs: tuple[tuple[int, int], ...]
    only_a: tuple[int, ...]
    only_b: tuple[int, ...]


def _shapes(f: FusionRecord) -> tuple[Hashable, ...]:
    return tuple((t.kind, t.dtype, t.shape) for t in f.inputs)


def _dtypes(f: FusionRecord) -> tuple[Hashable, ...]:
    return tuple((t.kind, t.dtype) for t in f.inputs)


def _group(
    fusions: Sequence[FusionRecord], indices: Iterable[int], key: Callable[[FusionRecord], Hashable]
) -> dict[Hashable, list[int]]:
    groups: dict[Hashable, list[int]] = defaultdict(list)
    for i in indices:
        groups[key(fusions[i])].append(i)
    return groups


def _pair_group(
    a: Sequence[FusionRecord], b: Sequence[FusionRecord], ia: list[int], ib: list[int]
) -> list[tuple[int, int]]:
    """Pair equally good candidates: same name and trace first, then in capture order."""
    pairs = []
    rest_b = list(ib)
    rest_a = []
    for i in ia:
        same = next((j for j in rest_b if (b[j].name, b[j].trace) == (a[i].name, a[i].trace)), None)
        if same is None:
            rest_a.append(i)
        else:
            pairs.append((i, same))
            rest_b.remove(same)
    pairs.extend(zip(rest_a, rest_b))
    return pairs


def match_fusions(
    a: Sequence[FusionRecord], b: Sequence[FusionRecord]
) -> tuple[list[FusionMatch], list[FusionLeftOver]]:
    """Pair the fusions of two captures; see the module docstring for the passes."""
    # dicts as ordered sets: removal is O(1) and iteration keeps capture order.
    left_a = dict.fromkeys(range(len(a)))
    left_b = dict.fromkeys(range(len(b)))
    matches: list[FusionMatch] = []

    def run_pass(name: MatchedBy, key: Callable[[FusionRecord], Hashable], unique_only: bool) -> None:
        groups_a = _group(a, left_a, key)
        groups_b = _group(b, left_b, key)
        for k, ia in groups_a.items():
            ib = groups_b.get(k)
            if not ib or (unique_only and (len(ia) > 1 or len(ib) > 1)):
                continue
            for i, j in _pair_group(a, b, ia, ib):
                matches.append(FusionMatch(i, j, name))
                del left_a[i]
                del left_b[j]

    run_pass("definition_and_inputs", lambda f: (f.structure_hash, f.input_signature), unique_only=False)
    run_pass("definition_and_shapes", lambda f: (f.structure_hash, _shapes(f)), unique_only=False)
    run_pass("definition", lambda f: f.structure_hash, unique_only=True)
    run_pass("name", lambda f: (f.name, f.trace, _dtypes(f)), unique_only=True)
    for i, j in _pair_similar_definitions(a, b, left_a, left_b):
        matches.append(FusionMatch(i, j, "similar_definition"))
        del left_a[i]
        del left_b[j]

    run_pass("same_inputs", _shapes, unique_only=True)

    left_overs = _unmatched_reasons("A", left_a, a, b) + _unmatched_reasons("B", left_b, b, a)
    matches.sort(key=lambda m: m.index_a)
    return matches, left_overs


def _pair_similar_definitions(
    a: Sequence[FusionRecord], b: Sequence[FusionRecord], left_a: Iterable[int], left_b: Iterable[int]
) -> list[tuple[int, int]]:
    groups_b = _group(b, left_b, _shapes)
    scored = []
    for shapes, ia in _group(a, left_a, _shapes).items():
        ib = groups_b.get(shapes, [])
        if not ib or len(ia) * len(ib) > _MAX_SIMILARITY_CANDIDATES:
            continue
        for i in ia:
            lines_a = canonical_definition(a[i].definition).splitlines()
            for j in ib:
                matcher = difflib.SequenceMatcher(
                    None, lines_a, canonical_definition(b[j].definition).splitlines(), autojunk=False
                )
                if matcher.quick_ratio() < SIMILAR_DEFINITION_RATIO:  # cheap upper bound first
                    continue
                ratio = matcher.ratio()
                if ratio >= SIMILAR_DEFINITION_RATIO:
                    scored.append((ratio, i, j))
    pairs, used_a, used_b = [], set(), set()
    for _, i, j in sorted(scored, key=lambda s: (-s[0], s[1], s[2])):
        if i not in used_a and j not in used_b:
            pairs.append((i, j))
            used_a.add(i)
            used_b.add(j)
    return pairs


def _unmatched_reasons(
    side: Side, left: Iterable[int], fusions: Sequence[FusionRecord], other: Sequence[FusionRecord]
) -> list[FusionLeftOver]:
    other_side = "B" if side == "A" else "A"
    definitions = Counter(g.structure_hash for g in other)
    names = {(g.name, g.trace) for g in other}
    left_overs = []
    for i in left:
        f = fusions[i]
        if definitions[f.structure_hash]:
            reason = (
                f"{definitions[f.structure_hash]} fusion(s) of {other_side} share its definition, but with "
                f"other input shapes, and none could be paired one to one"
            )
        elif (f.name, f.trace) in names:
            reason = (
                f"same name but different definition: {other_side} has {f.name} too, with another "
                f"definition and other input dtypes (or several candidates)"
            )
        else:
            reason = f"only in {side}"
        left_overs.append(FusionLeftOver(side, i, reason))
    return left_overs


def match_kernels(a: Sequence[KernelRecord], b: Sequence[KernelRecord]) -> KernelMatch:
    """Match two fusions' kernels by normalized name in launch order; align when they differ."""
    order_a = sorted(range(len(a)), key=lambda i: (a[i].order, i))
    order_b = sorted(range(len(b)), key=lambda j: (b[j].order, j))
    names_a = [a[i].normalized_name for i in order_a]
    names_b = [b[j].normalized_name for j in order_b]
    if names_a == names_b:
        return KernelMatch(tuple(zip(order_a, order_b)), (), ())
    pairs: list[tuple[int, int]] = []
    only_a: list[int] = []
    only_b: list[int] = []
    # autojunk off: with many launches of one kernel, difflib would treat it as junk and skip it.
    matcher = difflib.SequenceMatcher(None, names_a, names_b, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            pairs.extend(zip(order_a[a0:a1], order_b[b0:b1]))
        else:
            only_a.extend(order_a[a0:a1])
            only_b.extend(order_b[b0:b1])
    return KernelMatch(tuple(pairs), tuple(only_a), tuple(only_b))
