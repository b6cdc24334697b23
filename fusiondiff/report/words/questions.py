"""The words of the three questions a diff answers (:mod:`fusiondiff.diff.causes`): a verdict line
for each and its ledger, read by every renderer (terminal, Markdown, HTML, notebook, round trip).

- kernel time: :func:`kernel_line`, whether B runs each fusion's kernels at A's speed;
- host time per call: :func:`host_line`, ``fd.execute`` against ``fd.execute``, and what a side's
  host makes its GPU wait (Thunder's region call on the live side: the #1852 answer);
- repro fidelity: :func:`fidelity_line`, what B runs differently, with the kernel time the kernel
  ledger credits to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fusiondiff.diff.host_stats import HOST_FLOOR_RATIO, HOST_MIN_SAMPLES
from fusiondiff.diff.ledger import fidelity_findings
from fusiondiff.diff.records import DiffResult, Evidence, Finding, FusionPair, Ledger, LedgerEntry, TimingVerdict
from fusiondiff.records.gates import FIDELITY, HOST, KERNEL, QUESTIONS, Outcome
from fusiondiff.records.units import duration, durations, p_value, ratio
from fusiondiff.report.words.environment_words import host_side

TITLES = {KERNEL: "kernel time", HOST: "host time per call", FIDELITY: "repro fidelity"}
"""Each question's heading, in every output."""

GATES = {
    KERNEL: "gated by default",
    HOST: f"gated with --gate {HOST}",
    FIDELITY: "gated with --strict",
}


def causes_text(causes: tuple[str, ...]) -> str:
    """A ledger entry's causes: ``storage_offset``, or ``gpu and versions (jointly)``."""
    if not causes:  # a diff record written by hand or damaged: it names none
        return "no cause named"
    if len(causes) == 1:
        return causes[0]
    return f"{', '.join(causes[:-1])} and {causes[-1]} (jointly)"


def entry_text(entry: LedgerEntry) -> str:
    return f"{causes_text(entry.causes)} {duration(entry.explained_ns)}"


def ledger_line(ledger: Ledger, limit: int = 4) -> str:
    """``8.00 us of 8.00 us: storage_offset 8.00 us; unexplained 0 us``: the gap apportioned once."""
    if not ledger.gap_ns > 0:
        return "no gap to apportion"
    shown = [entry_text(e) for e in ledger.entries[:limit]]
    if len(ledger.entries) > limit:
        rest = sum(e.explained_ns for e in ledger.entries[limit:])
        shown.append(f"{len(ledger.entries) - limit} more {duration(rest)}")
    if ledger.unexplained_ns > 0:
        shown.append(f"unexplained {duration(ledger.unexplained_ns)}")
    return f"gap {duration(ledger.gap_ns)}: " + "; ".join(shown)


def kernel_line(result: DiffResult) -> str:
    """The kernel question's verdict in one line: whether a side failed, whether B runs at the same speed as A (or
    faster, slower: by how much, with the statistics), and whether the recorded properties are
    identical."""
    if not result.pairs:
        counts = {side: sum(1 for u in result.unmatched if u.side == side) for side in ("A", "B")}
        return (
            f"A and B run different programs: none of A's {counts['A']} fusion(s) has the definition or the "
            f"inputs of one of B's {counts['B']}, so no time is compared"
        )
    parts = []
    for side in ("B", "A"):
        failed = [p for p in result.failed if side in p.failed]
        if failed:
            kinds = sorted({dict(zip(p.failed, p.failure_kinds))[side].replace("_", " ") for p in failed})
            parts.append(f"{side} crashed: {_names(failed)} failed ({', '.join(kinds)})")
    parts.append(_speed(result))
    if result.missing:
        sides = sorted({u.side for u in result.missing})
        parts.append(f"{len(result.missing)} fusion(s) only in {' or '.join(sides)}")
    parts.append(_properties(result))
    text = "; ".join(parts)
    replay, live = result.replay_side, result.live_side
    if result.represented:
        records = len(result.pairs) + len(result.represented)
        text += f" ({replay}, a round trip's merged replay, replays {len(result.pairs)} distinct fusion(s) for {records} of {live}'s records"
        text += f"; {len(result.not_replayed)} not replayed)" if result.b_replays_subset else ")"
    elif result.b_replays_subset:
        text += f" ({replay} replays {len(result.pairs)} of {live}'s fusions; {len(result.not_replayed)} not replayed)"
    return text


def _names(pairs: tuple[FusionPair, ...] | list[FusionPair], limit: int = 3) -> str:
    names = [p.label for p in pairs]
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _speed(result: DiffResult) -> str:
    timed = [p for p in result.pairs if not p.failed]
    if not timed:
        return "no fusion was timed on both sides"
    differing = [p for p in timed if p.timing.verdict in ("FASTER", "SLOWER")]
    unclear = [p for p in timed if p.timing.verdict in ("NOT MEASURED", "AMBIGUOUS")]
    if not differing and not unclear:
        return f"same speed: {'the' if len(timed) == 1 else 'all'} {len(timed)} matched fusion(s) SAME {within(timed)}"
    if len(timed) == 1 and unclear:
        return f"kernel time not measured: {timed[0].timing.reason}"
    if len(timed) == 1 and differing:
        t = timed[0].timing
        word = "faster" if t.verdict == "FASTER" else "slower"
        factor = 1 / t.ratio if t.verdict == "FASTER" else t.ratio
        median_a, median_b = durations(t.median_a_ns, t.median_b_ns)
        return f"B is {factor:.2f}x {word}: {median_a} in A, {median_b} in B ({_beyond(t)})"
    counts = []
    for verdict, word in (("SLOWER", "slower"), ("FASTER", "faster")):
        n = sum(1 for p in differing if p.timing.verdict == verdict)
        if n:
            counts.append(f"{word} in {n}")
    if counts:
        text = f"B is {' and '.join(counts)} of {len(timed)} fusion(s)"
    else:
        text = f"kernel time not measured in {len(unclear)} of {len(timed)} fusion(s)"
    if differing:
        worst = max(differing, key=lambda p: abs(p.timing.gap_ns))
        t = worst.timing
        median_a, median_b = durations(t.median_a_ns, t.median_b_ns)
        text += f" (largest gap: {worst.label} {median_a} -> {median_b}, {ratio(t.ratio)}, {_beyond(t)})"
    if unclear and counts:
        text += f", {len(unclear)} not measured"
    same = [p for p in timed if p.timing.verdict == "SAME"]
    return text + (f", SAME in {len(same)} {within(same)}" if same else "")


def within(pairs: list[FusionPair]) -> str:
    """``within noise (+-4.8 %)`` (or ``(+-2.9 to +-4.8 %)``): the floors of SAME fusions, the
    smallest gap their data could show; ``within noise`` alone where no floor was recorded."""
    floors = sorted(p.timing.floor for p in pairs if p.timing.floor == p.timing.floor)
    if not floors:
        return "within noise"
    low, high = percent_floor(floors[0]), percent_floor(floors[-1])
    return f"within noise ({low})" if low == high else f"within noise ({low} to {high})"


def percent_floor(floor: float) -> str:
    """A verdict's floor (a log ratio) as ``+-4.8 %``."""
    return f"+-{100 * floor:.1f} %"


def _beyond(t: TimingVerdict) -> str:
    """Why a gap counts: beyond the floor, and where the spread came from."""
    if t.floor != t.floor:  # a diff record written before the floor: its test
        return f"Mann-Whitney p={p_value(t.p_value)}"
    source = t.spread_of if t.spread == "measured" else f"calibrated: {t.spread_of}"
    return f"beyond the {percent_floor(t.floor)} two processes can differ by; spread {source}"


def _properties(result: DiffResult) -> str:
    kernel = result.findings_of(KERNEL)
    property_findings = [f for f in kernel if f.role != "unexplained"]
    if not property_findings and not any(p.unmatched_kernels for p in result.pairs):
        if not kernel:
            return "recorded properties identical"
        if result.same_speed:
            kernels = sum(len(f.kernels) for f in kernel)
            return f"recorded properties identical ({kernels} kernel(s) inside same-speed fusions differ in time, unexplained)"
        return "recorded properties identical: nothing recorded explains the gap"
    ledger = result.ledger(KERNEL)
    count = len(property_findings)
    if ledger.explained_ns > 0:
        return (
            f"recorded properties differ: {count} finding(s), explaining {duration(ledger.explained_ns)} "
            f"of the {duration(ledger.gap_ns)} gap"
        )
    if any(f.role == "failure" for f in kernel):
        return f"{count} finding(s)"
    return f"recorded properties differ ({count} finding(s)) but explain no measurable time"


def _times(result: DiffResult) -> dict[str, Evidence]:
    return {e.field: e for e in result.host_times}


def _ns(e: Evidence | None, side: str) -> str:
    value = None if e is None else e.on(side)
    return "-" if value is None or value != value else duration(value)


def host_line(result: DiffResult) -> str:
    """Host time per call like for like (``fd.execute`` in the protocol's calls on both sides),
    judged between processes, or why it could not be; then each side whose host keeps its GPU
    waiting (``host_bound``), reported, not blamed on the other, and each side whose calls wait
    for their kernels."""
    times = _times(result)
    measured = [p for p in result.pairs if p.host is not None and not p.failed]
    judged = [p for p in measured if p.host is not None and p.host.verdict != "NOT MEASURED"]
    if not measured:
        parts = ["fd.execute's host time was not measured on both sides"]
    elif not judged:
        parts = [f"not judged: {_too_few(measured)}"]
    else:
        parts = [_execute_line(result, judged, measured)]
    thunder = times.get("session_call_ns")
    if thunder is not None and thunder.a is not None:
        session = times.get("session_execute_ns")
        parts.append(f"A's Thunder region call takes {_ns(thunder, 'A')} per call (its fd.execute {_ns(session, 'A')})")
    for f in result.findings_of(HOST):
        side = host_side(f)
        waits = {e.field: e for e in f.data}.get("gpu_wait_step_ns")
        if f.evidenced:  # a side whose host keeps its GPU waiting
            parts.append(f"{side}'s host keeps its GPU waiting ({_ns(waits, side)} per step): #{f.rank} {f.rule}")
        else:  # a side whose calls wait for their kernels: listed, not seen acting, not gated
            parts.append(f"{side}'s calls wait for their kernels in {len(f.fusions)} fusion(s), not host-bound")
    return "; ".join(parts)


def _too_few(measured: list[FusionPair]) -> str:
    """Why the host question could not be judged: the sample counts."""
    counts = sorted({(p.host.count_a, p.host.count_b) for p in measured if p.host is not None})
    shown = ", ".join(f"{a} vs {b}" for a, b in counts[:3])
    return f"fd.execute timed {shown} times a side, fewer than the {HOST_MIN_SAMPLES} a host verdict needs"


def _execute_line(result: DiffResult, judged: list[FusionPair], measured: list[FusionPair]) -> str:
    """``fd.execute`` against ``fd.execute`` where enough samples were taken."""
    execute = _times(result).get("execute_ns")
    medians = f"median {_ns(execute, 'A')} in A, {_ns(execute, 'B')} in B"
    floor = f"between processes, a gap under {HOST_FLOOR_RATIO:.2f}x is noise"
    rest = len(measured) - len(judged)
    unjudged = f"; {rest} fusion(s) not judged (too few host samples)" if rest else ""
    differing = [p for p in judged if p.host is not None and p.host.verdict in ("FASTER", "SLOWER")]
    if not differing:
        return f"fd.execute per call: no difference confirmed in {len(judged)} fusion(s) ({medians}; {floor}){unjudged}"
    slower = sum(1 for p in differing if p.host is not None and p.host.verdict == "SLOWER")
    worst = max(differing, key=lambda p: abs(p.host.gap_ns) if p.host is not None else 0.0)
    t = worst.host
    assert t is not None
    a, b = durations(t.median_a_ns, t.median_b_ns)
    return (
        f"fd.execute per call: B slower in {slower}, faster in {len(differing) - slower} of "
        f"{len(judged)} fusion(s) ({medians}; largest: {worst.label} {a} -> {b}, {ratio(t.ratio)}; {floor}){unjudged}"
    )


def fidelity_line(result: DiffResult) -> str:
    """What B runs differently from A, with the kernel time the fidelity ledger gives it (a share
    several causes hold jointly said once, with all of them); then what else differs that
    ``--strict`` gates (:attr:`~fusiondiff.diff.records.DiffResult.runs_alike`)."""
    if result.different_programs or not result.pairs:
        return "B runs a different program from A: no fusion's definition or inputs in common"
    found = fidelity_findings(result)
    rest = _strict_rest(result, {f.rule for f in found})
    if not found:
        return "B runs what A ran (definition, constants, inputs, options and variables as recorded)" + rest
    rules = list(dict.fromkeys(f.rule for f in found))
    timed = [
        e for e in result.ledger(FIDELITY).entries if e.explained_ns > 0 and e.causes
    ]  # a damaged record may name none
    named = [_share_text(e) for e in timed]
    shared = {c for e in timed for c in e.causes}
    named += [rule for rule in rules if rule not in shared]
    return f"B runs {len(rules)} thing(s) differently from A: {', '.join(named)}" + rest


def _share_text(entry: LedgerEntry) -> str:
    """``storage_offset (3.62 us of kernel time)``, or ``constant_precision and storage_offset
    jointly (3.62 us of kernel time)``: one share, said once."""
    causes = entry.causes
    who = causes[0] if len(causes) == 1 else f"{', '.join(causes[:-1])} and {causes[-1]} jointly"
    return f"{who} ({duration(entry.explained_ns)} of kernel time)"


def _strict_rest(result: DiffResult, named: set[str]) -> str:
    """What else ``--strict`` fails on: recorded properties that differ and follow from nothing
    B runs differently, and kernels launched on one side only."""
    others = sorted({f.rule for f in result.findings_of(KERNEL) if f.role != "unexplained" and not f.caused_by} - named)
    parts = [f"other recorded properties differ ({', '.join(others)})"] if others else []
    one_sided = sum(len(p.unmatched_kernels) for p in result.pairs)
    if one_sided:
        parts.append(f"{one_sided} kernel(s) launched on one side only")
    return f"; {' and '.join(parts)}, which --strict gates too" if parts else ""


def question_lines(result: DiffResult, kernel: str | None = None) -> dict[str, str]:
    """Each question's verdict line by its name; ``kernel`` replaces the kernel question's own
    (the round trip's, which names its stages)."""
    return {
        KERNEL: kernel_line(result) if kernel is None else kernel,
        HOST: host_line(result),
        FIDELITY: fidelity_line(result),
    }


def gate_word(result: DiffResult, question: str) -> str:
    """``passes``, ``fails`` or ``not measured``, with how the question is gated."""
    return f"{result.outcome(question)}, {GATES[question]}"


@dataclass(frozen=True)
class QuestionView:
    """One question as every report shows it: heading, gate, verdict line, ledger line, findings."""

    question: str
    title: str
    gate: str
    """``passes, gated by default`` and the like (:func:`gate_word`)."""
    verdict: str
    ledger: str
    findings: tuple[Finding, ...]
    """Its findings in rank order; none for fidelity, whose findings the kernel question ranks
    (its verdict line names them with the kernel time credited to each)."""


def question_views(result: DiffResult) -> list[QuestionView]:
    """The three questions of a diff, in order."""
    verdicts = question_lines(result)
    return [
        QuestionView(
            q,
            TITLES[q],
            gate_word(result, q),
            verdicts[q],
            ledger_line(result.ledger(q)) if result.ledgers else "no ledger (a diff record written before it)",
            result.findings_of(q) if q != FIDELITY else (),
        )
        for q in QUESTIONS
    ]


def answer_lines(result: DiffResult) -> list[tuple[str, str, Outcome]]:
    """The answer every format gives first: each question's label (``kernel``, ``host``,
    ``fidelity``), its line and its outcome (``passes``, ``fails``, ``not measured``)."""
    lines = question_lines(result)
    return [(q, lines[q], result.outcome(q)) for q in QUESTIONS]


def questions_json(result: DiffResult) -> dict[str, Any]:
    """Each question's verdict line, ledger line, whether it could be judged and whether it passes,
    ``exit_code`` with its gate added, and the ranks of its findings (fidelity: the kernel findings
    of what B runs differently): the diff record's ``questions``."""
    return {
        view.question: {
            "verdict": view.verdict,
            "ledger": view.ledger,
            "judged": result.judged(view.question),
            "passes": result.passes(view.question),
            "exit_code": result.exit_code(gates=(view.question,)),
            "findings": [f.rank for f in (fidelity_findings(result) if view.question == FIDELITY else view.findings)],
        }
        for view in question_views(result)
    }
