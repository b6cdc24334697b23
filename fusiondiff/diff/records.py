"""The records a diff produces: matched pairs, property changes, timing verdicts and findings.
A timing verdict's record is :mod:`fusiondiff.diff.verdicts`'s; its names are read from here too.

Like the capture records these are frozen dataclasses that :func:`fusiondiff.records.model.to_jsonable`
turns into JSON. They name kernels and fusions by label instead of embedding the capture records,
so a diff of 10,000 kernels stays small; the captures themselves stay the source of the samples.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Literal

from fusiondiff.diff.peak_records import KernelAgainstPeaks as KernelAgainstPeaks
from fusiondiff.diff.status import Status as Status
from fusiondiff.diff.verdicts import Spread as Spread
from fusiondiff.diff.verdicts import TimingVerdict
from fusiondiff.diff.verdicts import Verdict as Verdict
from fusiondiff.records.constraints import NaNFloat
from fusiondiff.records.gates import FIDELITY, HOST, KERNEL, STRICT_GATE, Outcome, exit_code_of
from fusiondiff.records.gates import Question as Question

Side = Literal["A", "B"]

Role = Literal["failure", "cause", "setup", "consequence", "circumstance", "unexplained"]
"""What a finding is, as the causal model (:mod:`fusiondiff.diff.causes`) declares its rule:
``failure``, a side's execution failed (it ranks first, with the cause the data shows for it);
``cause``, a recorded input or setting of the fusion differs; ``setup``, the two numbers were not
taken like for like (protocol, machine, versions, what ran beside); ``consequence``, a mechanism:
how a cause acted (clocks, nvFuser's segments, launch config, source, the block level);
``circumstance``, what one side's run was like, reported beside a gap but never counted in it (a
live step whose host keeps its GPU waiting); ``unexplained``, the times differ and nothing
recorded does."""

Category = Literal[
    "definition",
    "constants",
    "inputs",
    "options",
    "env_vars",
    "runtime_env",
    "environment",
    "clocks",
    "protocol",
    "segmentation",
    "launch",
    "source",
]
"""Which kind of recorded property a :class:`PropertyChange` is about."""


@dataclass(frozen=True)
class PropertyChange:
    """One recorded property that differs between A and B."""

    path: str
    """Where, in the record (``inputs[1].alignment_bytes``, ``launch.block``, ``nvfuser_env``)."""
    a: Any
    """Value on side A; ``None`` where A lacks the property (an input or variable only in B)."""
    b: Any
    """Value on side B; ``None`` where B lacks it."""
    category: Category
    kernel: str | None = None
    """Normalized name of the kernel it belongs to; ``None`` for fusion- and capture-level ones."""
    input_index: int | None = None
    """For an input's change: the input's position (``path`` says it as ``inputs[1]...``)."""
    attribute: str | None = None
    """For an input's change: the field of :class:`~fusiondiff.records.model.TensorMeta` that differs
    (``alignment_bytes``); ``None`` for an input present on one side only."""


@dataclass(frozen=True)
class KernelPair:
    """A kernel of A matched to a kernel of B (same scheduler and segment group)."""

    normalized_name: str
    name_a: str
    """Raw launched name on side A (its ``f/c/r`` parts carry cache history)."""
    name_b: str
    order_a: int
    order_b: int
    timing: TimingVerdict
    changes: tuple[PropertyChange, ...] = ()
    """Launch configuration and source differences of this kernel."""


@dataclass(frozen=True)
class UnmatchedKernel:
    """A kernel launched on one side only (segmentation changed, or a foreign kernel)."""

    side: Side
    name: str
    normalized_name: str
    order: int
    median_ns: NaNFloat
    reason: str


MatchedBy = Literal[
    "definition_and_inputs", "definition_and_shapes", "definition", "name", "similar_definition", "same_inputs"
]
"""The matching passes of :func:`fusiondiff.diff.match.match_fusions`, strongest first."""


@dataclass(frozen=True)
class FusionPair:
    """A fusion of A matched to a fusion of B, with everything that differs between them."""

    label: str
    """Short unique name used by findings and reports (``nvFusion0 [forward] vs fusion0``)."""
    key_a: str
    """:attr:`fusiondiff.records.model.FusionRecord.key` on side A."""
    key_b: str
    index_a: int
    """Position of the fusion in ``Capture.fusions`` of A."""
    index_b: int
    matched_by: MatchedBy
    """Which matching pass paired them, strongest first (see :mod:`fusiondiff.diff.match`)."""
    timing: TimingVerdict
    kernels: tuple[KernelPair, ...] = ()
    unmatched_kernels: tuple[UnmatchedKernel, ...] = ()
    changes: tuple[PropertyChange, ...] = ()
    """Fusion-level differences: definition, constants, inputs, options, segmentation."""
    definition_diff: tuple[str, ...] = ()
    """Op-level diff of the printed definitions (``-`` lines from A, ``+`` lines from B)."""
    failed: tuple[Side, ...] = ()
    """Sides whose execution of the fusion failed (see ``FusionRecord.failure``): no timing there."""
    failure_kinds: tuple[str, ...] = ()
    """``FusionFailure.kind`` of each side in ``failed``, in the same order."""
    host: TimingVerdict | None = None
    """The host time of one call measured alike on both sides: ``fd.execute`` in the timing
    protocol's host calls and warm-ups (``HostTiming.execute_ns``), judged between processes
    (:mod:`fusiondiff.diff.host_stats`; ``NOT MEASURED`` with too few samples); ``None`` where a
    side did not measure it."""

    def __post_init__(self) -> None:
        if len(self.failed) != len(self.failure_kinds):
            raise ValueError(f"failed names {len(self.failed)} side(s) but failure_kinds {len(self.failure_kinds)}")

    @property
    def failed_alike(self) -> bool:
        """Both sides' executions failed, of the same kind: the same failure is no difference."""
        return len(self.failed) == 2 and len(set(self.failure_kinds)) == 1


@dataclass(frozen=True)
class UnmatchedFusion:
    """A fusion with no counterpart on the other side. Reported, never dropped."""

    side: Side
    key: str
    name: str
    trace: str | None
    median_ns: NaNFloat
    reason: str


Unit = Literal["ns", "count", "fraction", "mhz", "bytes", "flags", "id", "elements", "value", "text", "fact"]
"""The unit of an :class:`Evidence` value; renderers choose how to show it (ns as us...). ``flags``:
a bit mask (NVML's clock event reasons); ``id``: an identifier shown as an integer (a stream, a PID);
``elements``: a count of tensor elements; ``value``: a recorded value as it is (a dtype, a shape, an
option list); ``text``: words from a record (a message, a definition line, a hash); ``fact``: the
evidence is that it is there (its values are ``None``)."""

EvidenceValue = bool | int | float | str | tuple[Any, ...] | None
"""A value of an :class:`Evidence`: a number, a string from a record, or a sequence of them."""


@dataclass(frozen=True)
class Evidence:
    """One measured quantity behind a finding: its value on each side, with its unit."""

    field: str
    """What was measured (``waves``, ``cta_p50_ns``: a field of ``fusiondiff.records.blocks.BlockStats``;
    ``storage_offset``: a field of an input)."""
    a: EvidenceValue
    """Its value on side A (``None``: not measured or not there)."""
    b: EvidenceValue
    unit: Unit
    subject: str | None = None
    """What the value is about when ``field`` alone does not say: the name of the other kernel it
    counts (``other_kernel_overlap_ns``), the kernel a launch field belongs to, the path of a
    recorded property; a name from a capture, escaped where it is rendered."""
    index: int | None = None
    """The fusion input it is about (its position), for an input's evidence."""

    def on(self, side: str) -> float | None:
        """The value on ``side`` (``A`` or ``B``) as a number; ``None`` where it is not one."""
        value = self.a if side == "A" else self.b
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Finding:
    """One cause (or circumstance) that explains part of the timing gap, with its evidence."""

    rule: str
    """Id of the rule that produced it (``storage_offset``, ``kernel_variant``...)."""
    role: Role
    fusions: tuple[str, ...]
    """Labels of the fusion pairs it explains (all pairs for capture-wide findings)."""
    kernels: tuple[str, ...] = ()
    """``<pair label>/<normalized kernel name>`` of the kernels it explains, if kernel-specific."""
    explained_ns: NaNFloat = 0.0
    """The part of its question's gap the ledger gives it (:mod:`fusiondiff.diff.ledger`): the gaps
    of its fusions where it is the one root present, or one of several (``joint_with`` names the
    others). 0 for what follows from another finding of the same fusions (it is that finding's
    evidence: ``caused_by``), and for a property that differs but costs no measurable time."""
    rank: int = 0
    """1 for the first finding of the kernel question; see :func:`fusiondiff.diff.ledger.rank`."""
    caused_by: tuple[int, ...] = ()
    """For a consequence: ranks of the findings it follows from (the causal model's edges) that
    name the same fusions."""
    supported_by: tuple[int, ...] = ()
    """For a cause: ranks of the findings that follow from it (e.g. the kernel variant it led to)."""
    question: Question = KERNEL
    """The question it is counted on (``kernel``, ``host``): :data:`fusiondiff.records.gates.QUESTIONS`."""
    evidenced: bool = True
    """False where the rule saw the node but no sign that it acted (other processes NVML never saw
    running kernels): listed, but given no share of a gap."""
    joint_with: tuple[str, ...] = ()
    """The other root causes its ``explained_ns`` is shared with, jointly: present for the same
    fusions, none following from another, so the data cannot tell their shares apart."""
    alone_ns: NaNFloat = 0.0
    """The part of ``explained_ns`` it takes alone (fusions where it is the one root present); the
    rest is shared with ``joint_with``."""
    status: Status | None = None
    """What it is to its question's ledger (:data:`Status`), set by the ledger; ``None`` in a diff
    record written before it (:func:`fusiondiff.diff.ledger.status_of` decides it then)."""
    data: tuple[Evidence, ...] = ()
    """The evidence as data: numbers with their units, values and names from the records. The
    words (a title, a line per piece of evidence) are the renderers', all from
    :mod:`fusiondiff.report.words.wording`."""
    title: str = ""
    """Empty as a rule yields it. In the JSON of a diff, the title the reports show, written from
    ``data`` for readers of the JSON; in a diff record of schema 1 (before findings were data), the
    title its rule wrote, rendered as it is."""
    evidence: tuple[str, ...] = ()
    """Empty as a rule yields it; in JSON, the evidence lines (see ``title``)."""


@dataclass(frozen=True)
class LedgerEntry:
    """One share of a question's gap: the fusions whose gap it is, and the root causes it goes to
    (one, or several jointly)."""

    causes: tuple[str, ...]
    """Rule names (nodes of :mod:`fusiondiff.diff.causes`), in name order."""
    explained_ns: float
    fusions: tuple[str, ...]
    """Labels of the fusion pairs whose gap this is."""


@dataclass(frozen=True)
class Ledger:
    """One question's gap apportioned once: ``sum(e.explained_ns for e in entries) +
    unexplained_ns == gap_ns``, always (:func:`fusiondiff.diff.ledger.attribute`)."""

    question: str
    """``kernel``, ``host`` or ``fidelity``."""
    gap_ns: float
    """The sum over fusion pairs of the absolute median gap: kernel, of the fusion's kernel time
    where its verdict is not SAME; host, of ``fd.execute``'s host time where the statistics confirm
    a difference (FASTER, SLOWER); fidelity, the kernel gap of the fusions B runs differently."""
    entries: tuple[LedgerEntry, ...] = ()
    """Largest first; equal ones in the order of their causes' names."""
    unexplained_ns: float = 0.0
    unexplained_fusions: tuple[str, ...] = ()

    @property
    def explained_ns(self) -> float:
        return sum(e.explained_ns for e in self.entries)


@dataclass(frozen=True)
class DiffResult:
    """Everything :func:`fusiondiff.diff.diff` found about two captures. What it answers from its
    pairs (which differ, which were not measured, the questions' gates) is worked out once: the
    record is frozen, and a report asks the gates many times over thousands of pairs."""

    label_a: str
    """How reports name side A (``A (live)``)."""
    label_b: str
    source_a: str
    """What side A ran (``Capture.source``)."""
    source_b: str
    pairs: tuple[FusionPair, ...]
    unmatched: tuple[UnmatchedFusion, ...]
    changes: tuple[PropertyChange, ...]
    """Capture-level differences: environment, NVFUSER_* variables, clocks, timing protocol."""
    findings: tuple[Finding, ...]
    """Ranked: failures, then the kernel question's findings (``findings[0]`` explains most),
    then the host question's."""
    warnings: tuple[str, ...] = ()
    b_replays_subset: bool = False
    """A side (B, or A where :attr:`replay_side` says so) is a replay whose every fusion matched
    one of the other's: the usual case of a repro script for one fusion of a session. The other
    side's other fusions were not replayed, which is not a difference."""
    b_from_roundtrip: bool = False
    """The replay side (:attr:`replay_side`) is the merged replay ``fusiondiff roundtrip`` wrote
    (:func:`fusiondiff.records.notes.from_roundtrip`)."""
    replay_side: Side = "B"
    """Which side the replay of :attr:`b_replays_subset`, :attr:`b_from_roundtrip` and
    :attr:`represented` is: B usually, A for a diff given the replay first."""
    represented: tuple[UnmatchedFusion, ...] = ()
    """The live side's records that a round trip's merged replay (the other side) stands for: each
    is the same distinct fusion (``FusionRecord.replay_key``) as a paired record of its side,
    which the round trip replayed once. They are compared through that pair, neither missing nor
    "not replayed"."""
    ledgers: tuple[Ledger, ...] = ()
    """Each question's gap apportioned once (kernel, host, fidelity); empty in a diff record
    written before the questions were apart."""
    host_times: tuple[Evidence, ...] = ()
    """Each side's host time per call, medians over the timed pairs: ``execute_ns`` (``fd.execute``
    in the protocol's warm-ups, alike on both sides), ``session_execute_ns`` (the session's own
    ``fd.execute``), ``session_call_ns`` (Thunder's region call: wrapper, cache lookup, input
    descriptors, ``fd.execute``: what #1852 timed), ``kernel_per_call_ns``; and ``gpu_wait_step_ns``,
    the GPU's wait for the host over one call of each fusion times A's calls of it, over the steps
    A's records span (``rules_host.steps_recorded``). Only the
    fields some side measured."""
    against_peaks: tuple[KernelAgainstPeaks, ...] = ()
    """Each matched kernel against the two GPUs' measured peaks, where both captures measured one
    (:mod:`fusiondiff.diff.speed_of_light`); empty otherwise, and in diff records written before."""

    different_programs: bool = False
    """The captures run different programs: no fusion pairs by its definition or its inputs (a
    shared name aside), so nothing is compared (:func:`fusiondiff.diff.core.different_programs`)."""

    def ledger(self, question: str) -> Ledger:
        """The ledger of ``question``; an empty one where none was recorded."""
        return next((x for x in self.ledgers if x.question == question), Ledger(question, 0.0))

    def findings_of(self, question: str) -> tuple[Finding, ...]:
        """The findings counted on ``question`` (``kernel``, ``host``), in rank order. The fidelity
        question's are kernel findings: :func:`fusiondiff.diff.ledger.fidelity_findings`."""
        return tuple(f for f in self.findings if f.question == question)

    @property
    def live_side(self) -> Side:
        """The side the replay side (:attr:`replay_side`) replays."""
        return "A" if self.replay_side == "B" else "B"

    @property
    def not_replayed(self) -> tuple[UnmatchedFusion, ...]:
        """The live side's fusions that a partial replay (the other side) did not run."""
        return self.unmatched if self.b_replays_subset else ()

    @functools.cached_property
    def failed(self) -> tuple[FusionPair, ...]:
        """Pairs where a side's execution failed (a crashed replay)."""
        return tuple(p for p in self.pairs if p.failed)

    @property
    def missing(self) -> tuple[UnmatchedFusion, ...]:
        """Fusions without a counterpart that count as a difference (not A's fusions that a
        partial replay did not run)."""
        return () if self.b_replays_subset else self.unmatched

    @property
    def same_speed(self) -> bool:
        """The kernel question passes: every matched fusion ran at the same speed on both sides
        (verdict SAME), or failed alike on both, and none is missing."""
        return self.outcome(KERNEL) == "passes"

    @functools.cached_property
    def differing(self) -> tuple[FusionPair, ...]:
        """Pairs that differ in kernel time or in whether they ran: FASTER, SLOWER, or a failure
        on one side only (or of another kind on each)."""
        return tuple(
            p for p in self.pairs if p.timing.verdict in ("FASTER", "SLOWER") or (p.failed and not p.failed_alike)
        )

    @functools.cached_property
    def not_measured(self) -> tuple[FusionPair, ...]:
        """Pairs whose kernel time could not be judged (no samples, a median of 0 ns)."""
        return tuple(p for p in self.pairs if not p.failed and p.timing.verdict in ("NOT MEASURED", "AMBIGUOUS"))

    @functools.cached_property
    def properties_identical(self) -> bool:
        """No finding of the kernel question: every recorded property compared is the same on both
        sides (what a side's host was like, the host question's, is no property of the fusion)."""
        return not self.findings_of(KERNEL) and not any(p.unmatched_kernels for p in self.pairs)

    @functools.cached_property
    def runs_alike(self) -> bool:
        """B runs what A ran, as far as was recorded: no kernel finding names a property that
        differs (a gap nothing recorded explains is a timing, not a property) and every kernel
        launched on one side was launched on the other."""
        return not any(f.role != "unexplained" for f in self.findings_of(KERNEL)) and not any(
            p.unmatched_kernels for p in self.pairs
        )

    @property
    def comparable(self) -> bool:
        """Same speed and identical recorded properties: the two runs may be treated as the same."""
        return self.same_speed and self.properties_identical

    @functools.cached_property
    def host_same(self) -> bool:
        """The host time per call (``fd.execute`` against ``fd.execute``) is not confirmed to
        differ in any pair, and no side's host keeps its GPU waiting (``host_bound``). What is
        only listed (``evidenced`` False: a call that waits for its own kernels) and the setup
        causes the host ledger names do not fail it: they explain a gap, they are none."""
        return not any(f.role == "circumstance" and f.evidenced for f in self.findings_of(HOST)) and not any(
            p.host is not None and p.host.verdict in ("FASTER", "SLOWER") for p in self.pairs
        )

    @property
    def host_measured(self) -> bool:
        """Some pair's ``fd.execute`` host time was measured on both sides."""
        return any(p.host is not None and not p.failed for p in self.pairs)

    @functools.cached_property
    def host_judged(self) -> bool:
        """The host question could be judged: some timed pair has enough host samples on both
        sides (its host verdict is not ``NOT MEASURED``), or a side's host was found keeping its
        GPU waiting. False where no side measured host time, or every pair has too few samples:
        then :attr:`host_same` says nothing, and a gate asked for on it has not been passed."""
        judged = any(p.host is not None and p.host.verdict != "NOT MEASURED" and not p.failed for p in self.pairs)
        return judged or any(f.role == "circumstance" and f.evidenced for f in self.findings_of(HOST))

    def judged(self, question: str) -> bool:
        """Whether ``question`` could be judged from what was measured: ``host``, :attr:`host_judged`;
        the others, always here (their own "not measured" is the kernel verdicts')."""
        return self.host_judged if question == HOST else True

    def outcome(self, question: str) -> Outcome:
        """The question's gate: ``kernel`` fails on a pair that differs (:attr:`differing`), a
        missing fusion or nothing matched, and is not measured where a pair could not be judged;
        ``host`` fails unless :attr:`host_same`, and is not measured where it could not be judged
        (:attr:`host_judged`); ``fidelity`` fails unless B runs what A ran (:attr:`runs_alike`)."""
        if question == HOST:
            return "fails" if not self.host_same else "passes" if self.host_judged else "not measured"
        if question == FIDELITY:
            return "passes" if self.runs_alike and not self.different_programs else "fails"
        if not self.pairs or self.missing or self.differing:
            return "fails"
        return "not measured" if self.not_measured else "passes"

    def passes(self, question: str) -> bool:
        """The question's gate passes (:meth:`outcome`)."""
        return self.outcome(question) == "passes"

    def exit_code(self, strict: bool = False, gates: tuple[str, ...] = ()) -> int:
        """0 when every gated question passes, 1 when one fails, else 3 when one could not be
        judged (:func:`fusiondiff.records.gates.exit_code_of`). The kernel question is always
        gated; ``gates`` adds others (``host``); ``strict`` adds ``fidelity``."""
        gated = {KERNEL, *gates, *((STRICT_GATE,) if strict else ())}
        return exit_code_of(self.outcome(q) for q in sorted(gated))
