"""The ledger: each question's gap apportioned once, to the causes the causal model allows.

For every fusion pair and question, the gap (the absolute median gap where the question's verdict
is not SAME; for host time, only where the statistics confirm it: FASTER or SLOWER) goes to the nodes present for that fusion (:mod:`fusiondiff.diff.causes`)
that explain, whose effect is evidenced, and that have no ancestor among them (root causes first:
a mechanism takes a share only where no root cause of the fusion was recorded): one takes the
whole gap; several share one joint entry ("gpu and versions"), since the data cannot tell their
shares apart; none leaves the gap unexplained. So attributed plus unexplained is the gap,
always, and nothing depends on the order rules are listed in.

The findings then read their share from the ledger (:func:`credit`) and are ranked by it
(:func:`rank`): failures first, then the kernel question's findings by the time they explain, a
finding before those that follow from it, a tie in the causal model's declared order, never by
name; then the host question's.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from fusiondiff.diff.causes import ancestors, declared_position, node
from fusiondiff.diff.context import fusion_gap_ns, verdict_gap_ns
from fusiondiff.diff.records import DiffResult, Finding, FusionPair, Ledger, LedgerEntry, Status, TimingVerdict
from fusiondiff.records.gates import FIDELITY, HOST, KERNEL

Allocation = dict[str, tuple[str, ...]]
"""Each fusion label with a gap -> the causes its gap went to (empty: unexplained)."""


def attribute(
    question: str, gaps: Iterable[tuple[str, float]], present: Mapping[str, Iterable[str]]
) -> tuple[Ledger, Allocation]:
    """``question``'s ledger from each fusion's gap (label, ns) and the nodes present for it, and
    where each fusion's gap went."""
    amounts: dict[tuple[str, ...], float] = defaultdict(float)
    fusions: dict[tuple[str, ...], list[str]] = defaultdict(list)
    allocation: Allocation = {}
    total = unexplained = 0.0
    unexplained_fusions = []
    for label, gap in gaps:
        if not gap > 0:  # SAME, or a median missing
            continue
        total += gap
        roots = _roots(present.get(label, ()))
        allocation[label] = roots
        if roots:
            amounts[roots] += gap
            fusions[roots].append(label)
        else:
            unexplained += gap
            unexplained_fusions.append(label)
    ledger = Ledger(question, total, _entries(amounts, fusions), unexplained, tuple(unexplained_fusions))
    return ledger, allocation


def _entries(
    amounts: Mapping[tuple[str, ...], float], fusions: Mapping[tuple[str, ...], list[str]]
) -> tuple[LedgerEntry, ...]:
    """The ledger's entries, largest first; equal ones (a tie) in the causal model's declared order of
    their causes (:func:`~fusiondiff.diff.causes.declared_position`), not their names'."""
    entries = (LedgerEntry(causes, amount, tuple(fusions[causes])) for causes, amount in amounts.items())
    return tuple(sorted(entries, key=lambda e: (-e.explained_ns, [declared_position(c) for c in e.causes])))


def _roots(names: Iterable[str]) -> tuple[str, ...]:
    """The names that follow from none of the others; of those, the root causes alone where one
    was recorded: a mechanism whose causes were not recorded (a CUDA source that differs, clocks
    that moved) is a symptom, and a recorded root cause of the same fusion is the better answer."""
    present = set(names)
    top = [n for n in present if not ancestors(n) & present]
    causes = [n for n in top if node(n).role in ("setup", "cause")]
    return declared_order(causes or top)


def declared_order(names: Iterable[str]) -> tuple[str, ...]:
    """``names`` in the causal model's declared order (:func:`~fusiondiff.diff.causes.declared_position`,
    upstream first), as a tie is listed: several causes holding one gap jointly are an entry of the
    ledger in this order, never their names' (names only order rules the model does not know)."""
    return tuple(sorted(names, key=lambda n: (declared_position(n), n)))


def _counts(f: Finding, question: str) -> bool:
    """The finding can take a share of ``question``'s gap."""
    n = node(f.rule)
    if not f.evidenced or not n.explains or n.role in ("failure", "unexplained"):
        return False
    return n.question == question if question == KERNEL else n.host


def present_by_label(findings: Iterable[Finding], question: str) -> dict[str, set[str]]:
    """For each fusion label, the rules of the findings that can take a share of its gap."""
    present: dict[str, set[str]] = defaultdict(set)
    for f in findings:
        if _counts(f, question):
            for label in f.fusions:
                present[label].add(f.rule)
    return present


def ledgers(pairs: Sequence[FusionPair], findings: Sequence[Finding]) -> tuple[tuple[Ledger, ...], Allocation]:
    """The kernel, host and fidelity ledgers of a diff, and the kernel ledger's allocation."""
    timed = [p for p in pairs if not p.failed]
    kernel, allocation = attribute(
        KERNEL, ((p.label, fusion_gap_ns(p)) for p in timed), present_by_label(findings, KERNEL)
    )
    host, _ = attribute(
        HOST,
        ((p.label, _confirmed_gap_ns(p.host)) for p in timed if p.host is not None),
        present_by_label(findings, HOST),
    )
    return (kernel, host, _fidelity(timed, findings, allocation)), allocation


def _confirmed_gap_ns(timing: TimingVerdict) -> float:
    """A host gap counts where the statistics confirm it: a handful of warm-ups per side leaves
    most host verdicts AMBIGUOUS, and an unconfirmed gap is noise, not a difference."""
    return verdict_gap_ns(timing) if timing.verdict in ("FASTER", "SLOWER") else 0.0


def _fidelity(pairs: Sequence[FusionPair], findings: Sequence[Finding], allocation: Allocation) -> Ledger:
    """The kernel gap of the fusions B runs differently, as the kernel ledger gave it: to what B
    runs differently (alone or jointly with other causes), or to the rest."""
    different = {label for f in findings if node(f.rule).fidelity for label in f.fusions}
    amounts: dict[tuple[str, ...], float] = defaultdict(float)
    fusions: dict[tuple[str, ...], list[str]] = defaultdict(list)
    total = unexplained = 0.0
    rest = []
    for p in pairs:
        gap = fusion_gap_ns(p)
        if p.label not in different or not gap > 0:
            continue
        total += gap
        causes = allocation.get(p.label, ())
        if any(node(c).fidelity for c in causes):
            amounts[causes] += gap
            fusions[causes].append(p.label)
        else:
            unexplained += gap
            rest.append(p.label)
    return Ledger(FIDELITY, total, _entries(amounts, fusions), unexplained, tuple(rest))


def credit(findings: Sequence[Finding], pairs: Sequence[FusionPair], allocation: Allocation) -> list[Finding]:
    """Each finding with its share of the kernel ledger: the gaps of its fusions that went to its
    rule, alone (``alone_ns``) or jointly (``joint_with``); an ``unexplained`` finding, the gaps
    nothing took. A host finding is reported, not credited. :func:`settle` gives each its
    :data:`Status` once ranked."""
    gap = {p.label: fusion_gap_ns(p) for p in pairs if not p.failed}
    credited: set[tuple[str, str]] = set()  # (rule, label): a rule's share of a fusion, given once
    out = []
    for f in findings:
        explained, alone, joint = 0.0, 0.0, set[str]()
        if f.role == "unexplained":
            explained = sum(gap[label] for label in dict.fromkeys(f.fusions) if allocation.get(label) == ())
        elif f.question == KERNEL and _counts(f, KERNEL):
            for label in dict.fromkeys(f.fusions):
                causes = allocation.get(label, ())
                # two inputs of one fusion at another offset are two findings of one rule: the first
                # the rule yielded (the lower input index) holds the share, the other is listed
                if f.rule in causes and (f.rule, label) not in credited:
                    credited.add((f.rule, label))
                    explained += gap[label]
                    alone += gap[label] if causes == (f.rule,) else 0.0
                    joint.update(c for c in causes if c != f.rule)
        out.append(dataclasses.replace(f, explained_ns=explained, alone_ns=alone, joint_with=declared_order(joint)))
    return out


def settle(findings: Sequence[Finding], pairs: Sequence[FusionPair]) -> tuple[Finding, ...]:
    """The ranked, credited findings, each with its :data:`Status`: what it is to its ledger, set
    here once so that no renderer decides it again."""
    unjudged = {p.label for p in pairs if not p.failed and p.timing.verdict in ("NOT MEASURED", "AMBIGUOUS")}
    return tuple(
        dataclasses.replace(f, status=_status(f, bool(f.fusions) and set(f.fusions) <= unjudged)) for f in findings
    )


def _status(f: Finding, unmeasured: bool = False) -> Status:
    """What a credited finding is to its ledger (:data:`Status`); ``unmeasured``: its fusions'
    kernel times could not be judged."""
    if f.role == "unexplained":
        return "unexplained"
    if f.explained_ns > 0:
        return "joint" if f.joint_with else "cause"
    if f.caused_by:
        return "evidence"
    if f.role == "failure":
        return "failure"
    if f.role == "circumstance":
        return "reported"
    if not f.evidenced:
        return "not_seen"
    return "not_measured" if unmeasured else "no_time"


def status_of(f: Finding) -> Status:
    """A finding's status as the ledger set it; for a diff record written before the ledger set
    it, decided from what the record holds (its share, what it follows from, its role)."""
    return f.status if f.status is not None else _status(f)


_ROLE_ORDER = {"setup": 0, "cause": 1}
"""Of findings tied on the time they explain: not like for like, then what the fusion was given,
then the rest (mechanisms)."""


def rank(findings: Sequence[Finding]) -> tuple[Finding, ...]:
    """Failures first; then the kernel question's findings by the time they explain, what was seen
    acting before what was not (``evidenced``), a finding before those that follow from it (how
    many of its ancestors in the causal model are present), then what the two numbers were not
    taken like for like by (``setup``: until it is fixed, nothing else's share can be judged),
    what the fusion was given (``cause``), mechanisms; then what accounts for more of what was seen
    (how many present findings follow from it: of two causes sharing a gap, the one the observed
    mechanisms can follow from); then the host question's in the same order. What none of these
    tells apart is a tie (two causes holding one gap jointly: their words say "jointly with"):
    it is listed in the causal model's declared order (:func:`~fusiondiff.diff.causes.declared_position`,
    upstream first), a stable order and not a judgement, then by fusion, never by the rule's name. Each finding that follows from another of the same
    fusions lists it in ``caused_by``, and that one lists it in ``supported_by``."""

    present = {f.rule for f in findings if f.evidenced}
    causes_of = _follows(findings)
    accounts_for: dict[int, int] = defaultdict(int)
    for causes in causes_of.values():
        for c in causes:
            accounts_for[c] += 1

    def key(i: int) -> tuple[object, ...]:
        f = findings[i]
        return (
            f.role != "failure",
            f.question != KERNEL,
            -f.explained_ns,
            not f.evidenced,  # seen, but with no sign that it acted: after what was seen acting
            len(ancestors(f.rule) & present),  # after what it follows from, among what is present
            _ROLE_ORDER.get(node(f.rule).role, len(_ROLE_ORDER)),
            -accounts_for[i],
            declared_position(f.rule),  # a tie: listed in the declared order, not settled by a name
            f.fusions[:1],
            i,  # the order a rule yielded its findings in (an input rule: by input index)
        )

    order = sorted(range(len(findings)), key=key)
    rank_of = {i: r for r, i in enumerate(order, start=1)}
    supported: dict[int, list[int]] = defaultdict(list)
    for i, causes in causes_of.items():
        for c in causes:
            supported[c].append(rank_of[i])
    return tuple(
        dataclasses.replace(
            findings[i],
            rank=rank_of[i],
            caused_by=tuple(sorted(rank_of[c] for c in causes_of.get(i, ()))),
            supported_by=tuple(sorted(supported.get(i, ()))),
        )
        for i in order
    )


def _follows(findings: Sequence[Finding]) -> dict[int, list[int]]:
    """For each finding, the findings it follows from: an ancestor in the causal model, evidenced,
    that names every fusion it names."""
    by_rule: dict[str, list[int]] = defaultdict(list)
    for i, f in enumerate(findings):
        if f.evidenced:
            by_rule[f.rule].append(i)
    out: dict[int, list[int]] = {}
    for i, f in enumerate(findings):
        wanted = set(f.fusions)
        if not wanted:
            continue
        causes = [
            c for parent in ancestors(f.rule) for c in by_rule.get(parent, ()) if wanted <= set(findings[c].fusions)
        ]
        if causes:
            out[i] = sorted(causes)
    return out


def recount(result: DiffResult, pairs: Sequence[FusionPair]) -> DiffResult:
    """``result`` narrowed to ``pairs`` (some of its pairs): the findings that name one of them,
    and every question's ledger apportioned again over them alone, each finding credited, ranked
    and given its status again, so that what a narrowed report says is the ledger of what it shows."""
    labels = {p.label for p in pairs}
    found = [
        dataclasses.replace(f, explained_ns=0.0, alone_ns=0.0, joint_with=(), status=None)
        for f in result.findings
        if labels & set(f.fusions)
    ]
    counted, allocation = ledgers(pairs, found)
    findings = settle(rank(credit(found, pairs, allocation)), pairs)
    return dataclasses.replace(result, pairs=tuple(pairs), findings=findings, ledgers=counted)


def fidelity_findings(result: DiffResult) -> tuple[Finding, ...]:
    """The findings of what B runs differently from A (the fidelity question), in rank order."""
    return tuple(f for f in result.findings if node(f.rule).fidelity)
