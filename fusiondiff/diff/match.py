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

Within a group of equally good candidates (several fusions of one definition, as a model's repeated
layers make), fusions pair by what identifies them: the same name and trace first, then a replayed
record with the record its script was written for, whichever side the replay is on (a replay names
a fusion ``<script stem>:fusionN``, and ``fusiondiff repro`` writes ``<trace>_<name>.py``; a replay of
Thunder's folder names it ``<region>:fusionN``, the region ending in ``_<name>_<trace>``), then in
capture order; a pair made by order
alone is marked (:attr:`FusionMatch.by_order`), since only the graph says they are the same fusion.
Whatever is left is reported as unmatched with the reason, never dropped.

Kernels of a pair are matched by normalized name (scheduler and segment group), in launch order.
When the sequences differ (segmentation changed) they are aligned with ``difflib``; kernels outside
the aligned blocks are reported as unmatched. ``difflib`` is quadratic (worse with many launches of
one name), so long sequences are aligned in bounded time instead (:func:`_align_long`): equal runs
at both ends, then names that occur once on each side as anchors (patience diff), then ``difflib``
between anchors where the gap is small and an in-order walk with a bounded look-ahead where not.
"""

from __future__ import annotations

import bisect
import difflib
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from dataclasses import dataclass

from fusiondiff.diff.records import MatchedBy, Side
from fusiondiff.records.definition import canonical_definition
from fusiondiff.records.model import FusionRecord, KernelRecord

SIMILAR_DEFINITION_RATIO = 0.9
"""Pass 5 pairs definitions at least this alike (``difflib`` ratio over lines)."""
_MAX_SIMILARITY_CANDIDATES = 10_000
"""Pass 5 compares every left-over A with every left-over B of the same shapes; above this many
comparisons it is skipped, since thousands of left-overs mean the captures are unrelated anyway."""
_DIFFLIB_MAX_PRODUCT = 250_000
"""Kernel sequences whose lengths multiply to more than this are not given to ``difflib`` whole."""
_LOOKAHEAD = 64
"""How far the in-order walk of :func:`_align_walk` looks for the next equal name."""


@dataclass(frozen=True)
class FusionMatch:
    """Indices of a paired fusion in A's and B's ``Capture.fusions``, and the pass that paired them."""

    index_a: int
    index_b: int
    matched_by: MatchedBy
    by_order: bool = False
    """Paired by capture order among several fusions of one definition: nothing but the graph
    (no name, no script) says which of them this one is."""


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


def _written_for(a: FusionRecord, b: FusionRecord) -> bool:
    """B is the replay of a script written for A: B's script stem (a replay names each fusion
    ``<stem>:fusionN``) holds A's ``<trace>_<name>`` whole, as ``fusiondiff repro`` names the script
    (perhaps with a definition hash or ``_N`` after it, or a round trip's position before it), or
    ends in ``_<name>_<trace>``, as Thunder names a region's script."""
    stem, found, _ = b.name.partition(":")
    if not found:
        return False
    if a.trace is not None and stem.endswith(f"_{a.name}_{a.trace}"):
        return True  # a replay of Thunder's folder is named after the region: ``graph0_thunder_0_nvFusion0_forward``
    own = f"{a.trace or 'script'}_{a.name}"
    at = stem.find(own)
    while at >= 0:
        end = at + len(own)
        if (at == 0 or stem[at - 1] == "_") and (end == len(stem) or stem[end] == "_"):
            return True
        at = stem.find(own, at + 1)
    return False


def _pair_group(
    a: Sequence[FusionRecord], b: Sequence[FusionRecord], ia: list[int], ib: list[int]
) -> list[tuple[int, int, bool]]:
    """Pair equally good candidates: same name and trace first, then a replay with the record its
    script was written for (on either side), then in capture order. Each pair says whether order alone made it."""
    if len(ia) == 1 and len(ib) == 1:
        return [(ia[0], ib[0], False)]  # the usual group (distinct fusions): one candidate, no choice
    pairs = []
    rest_a, rest_b = list(ia), list(ib)
    for same in (
        lambda i, j: (b[j].name, b[j].trace) == (a[i].name, a[i].trace),
        lambda i, j: _written_for(a[i], b[j]) or _written_for(b[j], a[i]),
    ):
        unpaired = []
        for i in rest_a:
            j = next((j for j in rest_b if same(i, j)), None)
            if j is None:
                unpaired.append(i)
            else:
                pairs.append((i, j, False))
                rest_b.remove(j)
        rest_a = unpaired
    several = len(ia) > 1 or len(ib) > 1
    pairs.extend((i, j, several) for i, j in zip(rest_a, rest_b))
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
            for i, j, by_order in _pair_group(a, b, ia, ib):
                matches.append(FusionMatch(i, j, name, by_order))
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
    lines_a: dict[int, _Lines] = {}
    lines_b: dict[int, _Lines] = {}
    for shapes, ia in _group(a, left_a, _shapes).items():
        ib = groups_b.get(shapes, [])
        if not ib or len(ia) * len(ib) > _MAX_SIMILARITY_CANDIDATES:
            continue
        # each definition is canonicalised once, not once per comparison (a 1,000-line definition
        # takes milliseconds); B's side is the one difflib indexes, so it is set once per j
        for i in ia:
            if i not in lines_a:
                lines_a[i] = _Lines(a[i].definition)
        for j in ib:
            if j not in lines_b:
                lines_b[j] = _Lines(b[j].definition)
            lb = lines_b[j]
            matcher = difflib.SequenceMatcher(None, autojunk=False)
            matcher.set_seq2(lb.lines)
            for i in ia:
                la = lines_a[i]
                if la.ratio_bound(lb) < SIMILAR_DEFINITION_RATIO:  # set arithmetic, in C
                    continue
                matcher.set_seq1(la.lines)
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


class _Lines:
    """A definition's canonical lines, and what bounds its similarity to another cheaply."""

    def __init__(self, definition: str) -> None:
        self.lines = canonical_definition(definition).splitlines()
        self.distinct = frozenset(self.lines)
        self.repeated = len(self.lines) - len(self.distinct)

    def ratio_bound(self, other: _Lines) -> float:
        """An upper bound of ``difflib``'s ratio (and quick_ratio): lines in common, counted with
        their repeats at most, over both lengths."""
        total = len(self.lines) + len(other.lines)
        if total == 0:
            return 1.0
        common = len(self.distinct & other.distinct)
        return 2.0 * (common + min(self.repeated, other.repeated)) / total


def _unmatched_reasons(
    side: Side, left: Collection[int], fusions: Sequence[FusionRecord], other: Sequence[FusionRecord]
) -> list[FusionLeftOver]:
    if not left:
        return []  # every fusion paired: no need to index the other side
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


_ONE_PAIR = KernelMatch(((0, 0),), (), ())
"""The match of two fusions of one kernel each, of one name."""


def match_kernels(a: Sequence[KernelRecord], b: Sequence[KernelRecord]) -> KernelMatch:
    """Match two fusions' kernels by normalized name in launch order; align when they differ."""
    if len(a) == 1 and len(b) == 1 and a[0].normalized_name == b[0].normalized_name:
        return _ONE_PAIR  # most fusions launch one kernel: nothing to order
    order_a = sorted(range(len(a)), key=lambda i: (a[i].order, i))
    order_b = sorted(range(len(b)), key=lambda j: (b[j].order, j))
    names_a = [a[i].normalized_name for i in order_a]
    names_b = [b[j].normalized_name for j in order_b]
    if names_a == names_b:
        return KernelMatch(tuple(zip(order_a, order_b)), (), ())
    if len(names_a) * len(names_b) <= _DIFFLIB_MAX_PRODUCT:
        aligned = _align_difflib(names_a, names_b, 0, 0)
    else:
        aligned = _align_long(names_a, names_b)
    matched_a = {i for i, _ in aligned}
    matched_b = {j for _, j in aligned}
    return KernelMatch(
        tuple((order_a[i], order_b[j]) for i, j in aligned),
        tuple(order_a[i] for i in range(len(order_a)) if i not in matched_a),
        tuple(order_b[j] for j in range(len(order_b)) if j not in matched_b),
    )


def _align_difflib(x: Sequence[str], y: Sequence[str], x0: int, y0: int) -> list[tuple[int, int]]:
    """Positions of equal names, in order, as ``difflib`` aligns them (offset by ``x0``, ``y0``)."""
    # autojunk off: with many launches of one kernel, difflib would treat it as junk and skip it.
    matcher = difflib.SequenceMatcher(None, x, y, autojunk=False)
    pairs: list[tuple[int, int]] = []
    for a0, b0, size in matcher.get_matching_blocks():
        pairs.extend((x0 + a0 + k, y0 + b0 + k) for k in range(size))
    return pairs


def _align_long(x: Sequence[str], y: Sequence[str]) -> list[tuple[int, int]]:
    """Equal names of two long sequences in order, in about linear time (see the module docstring)."""
    x0, y0, x1, y1 = 0, 0, len(x), len(y)
    head = []
    while x0 < x1 and y0 < y1 and x[x0] == y[y0]:
        head.append((x0, y0))
        x0, y0 = x0 + 1, y0 + 1
    tail = []
    while x0 < x1 and y0 < y1 and x[x1 - 1] == y[y1 - 1]:
        x1, y1 = x1 - 1, y1 - 1
        tail.append((x1, y1))
    middle = _align_long_gap(x, y, x0, x1, y0, y1) if x0 < x1 and y0 < y1 else []
    return head + middle + tail[::-1]


def _align_long_gap(x: Sequence[str], y: Sequence[str], x0: int, x1: int, y0: int, y1: int) -> list[tuple[int, int]]:
    """One gap between two anchors: ``difflib`` when small, else the bounded walk."""
    if (x1 - x0) * (y1 - y0) <= _DIFFLIB_MAX_PRODUCT:
        return _align_difflib(x[x0:x1], y[y0:y1], x0, y0)
    anchors = _unique_anchors(x, y, x0, x1, y0, y1)
    if not anchors:
        return _align_walk(x, y, x0, x1, y0, y1)
    pairs = []
    px, py = x0, y0
    for ax, ay in anchors:
        if px < ax and py < ay:
            pairs.extend(
                _align_walk(x, y, px, ax, py, ay)
                if (ax - px) * (ay - py) > _DIFFLIB_MAX_PRODUCT
                else _align_difflib(x[px:ax], y[py:ay], px, py)
            )
        pairs.append((ax, ay))
        px, py = ax + 1, ay + 1
    if px < x1 and py < y1:
        pairs.extend(
            _align_walk(x, y, px, x1, py, y1)
            if (x1 - px) * (y1 - py) > _DIFFLIB_MAX_PRODUCT
            else _align_difflib(x[px:x1], y[py:y1], px, py)
        )
    return pairs


def _unique_anchors(x: Sequence[str], y: Sequence[str], x0: int, x1: int, y0: int, y1: int) -> list[tuple[int, int]]:
    """Names that occur once in ``x[x0:x1]`` and once in ``y[y0:y1]``, as the longest run of
    positions increasing on both sides (patience diff's anchors)."""
    count_x = Counter(x[x0:x1])
    count_y = Counter(y[y0:y1])
    where_y = {y[j]: j for j in range(y0, y1) if count_y[y[j]] == 1}
    candidates = [(i, where_y[x[i]]) for i in range(x0, x1) if count_x[x[i]] == 1 and x[i] in where_y]
    # longest increasing subsequence of the y positions (patience sorting, n log n)
    tails: list[int] = []
    tail_at: list[int] = []
    previous = [-1] * len(candidates)
    for k, (_, j) in enumerate(candidates):
        pos = bisect.bisect_left(tails, j)
        if pos == len(tails):
            tails.append(j)
            tail_at.append(k)
        else:
            tails[pos] = j
            tail_at[pos] = k
        previous[k] = tail_at[pos - 1] if pos else -1
    chain = []
    k = tail_at[-1] if tail_at else -1
    while k >= 0:
        chain.append(candidates[k])
        k = previous[k]
    return chain[::-1]


def _align_walk(x: Sequence[str], y: Sequence[str], x0: int, x1: int, y0: int, y1: int) -> list[tuple[int, int]]:
    """Equal names in order by walking both sides: where they differ, skip to the nearer next
    occurrence (within :data:`_LOOKAHEAD`) of one side's name on the other side."""
    pairs = []
    i, j = x0, y0
    while i < x1 and j < y1:
        if x[i] == y[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
            continue
        skip_y = next((d for d in range(1, min(_LOOKAHEAD, y1 - j)) if y[j + d] == x[i]), None)
        skip_x = next((d for d in range(1, min(_LOOKAHEAD, x1 - i)) if x[i + d] == y[j]), None)
        if skip_y is not None and (skip_x is None or skip_y <= skip_x):
            j += skip_y
        elif skip_x is not None:
            i += skip_x
        else:
            i, j = i + 1, j + 1
    return pairs
