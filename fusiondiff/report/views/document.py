"""The report document: the whole answer of a diff built once, as data with no markup, which every
format renders (text, Markdown, HTML and, through the HTML, the notebook).

The document holds, in the order every format gives them: the three answer lines (:class:`Answer`),
how the report was narrowed, where each side came from, one :class:`Section` per question (its
gate, ledger line and outcome, and its findings as :class:`Item` s with their words, status, links
and evidence), the note where nothing was found, the warnings (the diff's and each capture's, each
once), the tables where the report has its captures (:class:`Tables`) and the closing words. The
formats only mark it up: none of them words a finding, reads a ledger or decides what a section
shows; what one of them leaves out (the terminal: quiet sections, findings past
:data:`MAX_FINDINGS`) the document says too (:attr:`Section.quiet`, :attr:`Section.shown`).

A section is added here (:func:`_sections`, or a field of :class:`Document` built in
:func:`build_document`), then marked up by each format.
"""

from __future__ import annotations

from dataclasses import dataclass

from fusiondiff.diff.causes import node
from fusiondiff.diff.ledger import status_of
from fusiondiff.diff.records import DiffResult, Finding, Status
from fusiondiff.records.gates import KERNEL, Outcome
from fusiondiff.records.limits import TIMING_ROWS
from fusiondiff.report.interface import DiffReport
from fusiondiff.report.views import content as c
from fusiondiff.report.words import wording
from fusiondiff.report.words.paths import short_list
from fusiondiff.report.words.questions import QuestionView, question_views
from fusiondiff.report.words.report_words import NO_FINDING, explains_text, footer

MAX_FINDINGS = 10
"""Findings the terminal shows with their evidence, over all sections; the other formats and the
JSON record hold all of them."""
MAX_WARNINGS = 40
"""Warnings the terminal lists (a capture can carry one per fusion, thousands); the Markdown and
HTML reports list all of them."""


@dataclass(frozen=True)
class Answer:
    """One of the answer lines every format opens with."""

    question: str
    """``kernel``, ``host`` or ``fidelity``: the line's label."""
    line: str
    outcome: Outcome
    """``passes``, ``fails`` or ``not measured`` (the HTML colours the line by it)."""


@dataclass(frozen=True)
class Link:
    """A finding's link to others: ``supported by`` or ``follows from``, with the ranks it names."""

    heading: str
    targets: tuple[tuple[int, str], ...]
    """(rank, rule name) of each finding linked to; ``?`` for a rank the diff does not hold."""


@dataclass(frozen=True)
class Item:
    """One finding as every format shows it."""

    rank: int
    title: str
    """Its sentence (:func:`fusiondiff.report.words.wording.title`)."""
    rule: str
    role: str
    status: Status
    """What it is to its question's ledger, as the ledger set it."""
    explains: str
    """Its status in words (``explains 3.62 us``, ``evidence for #1``)."""
    links: tuple[Link, ...]
    evidence: tuple[str, ...]
    """Its evidence, one line each."""
    peaks: bool
    """The kernels against the two GPUs' peaks go under it (the GPU's finding)."""


@dataclass(frozen=True)
class Section:
    """One question's section: heading, gate, ledger line, outcome and findings."""

    question: str
    title: str
    """``kernel time``, ``host time per call``, ``repro fidelity``."""
    gate: str
    """``passes, gated by default`` and the like."""
    ledger: str
    """Its ledger in one line: the gap and who took what."""
    outcome: Outcome
    quiet: bool
    """It passes (or was not measured) with nothing to say: no finding, no gap, and not the kernel
    question; its answer line says all there is, and the terminal leaves the section out."""
    items: tuple[Item, ...]
    """Its findings in rank order (fidelity: none; the kernel section ranks them)."""
    shown: int
    """How many of :attr:`items` the terminal shows: :data:`MAX_FINDINGS` over all sections, in
    their order."""

    @property
    def heading(self) -> str:
        """The title as a heading: ``Kernel time``."""
        return self.title[0].upper() + self.title[1:]

    @property
    def left_out(self) -> int:
        """Findings the terminal leaves out of this section (the JSON record has them)."""
        return len(self.items) - self.shown


@dataclass(frozen=True)
class Tables:
    """The tables of a document made from the captures (:mod:`fusiondiff.report.views.content`)."""

    timing: tuple[c.TimingRow, ...]
    """The fusion and kernel rows, at most :data:`~fusiondiff.records.limits.TIMING_ROWS`."""
    timing_left_out: str
    """The sentence that says how many timing rows were left out ("" when none)."""
    environments: tuple[c.SideRow, ...]
    properties: tuple[c.PropertyRow, ...]
    """Every recorded property that differs (a document lists the first
    :data:`~fusiondiff.report.views.content.MAX_PROPERTY_ROWS`)."""


@dataclass(frozen=True)
class Document:
    """The whole answer of a diff, no markup (see the module's docstring)."""

    answers: tuple[Answer, ...]
    selection: str
    """How the report was narrowed, in one line ("" when whole)."""
    label_a: str
    label_b: str
    origins: tuple[tuple[str, str], ...]
    """(label, what ran) of each side, as the diff names them."""
    sides: tuple[c.SideRow, ...]
    """The two captures side by side (file, kind, what ran, when): where the report has them."""
    gpus: tuple[str, ...]
    """Each side's GPU and nvFuser in a line, where the report has the captures."""
    sections: tuple[Section, ...]
    no_finding: str
    """The note where the diff found nothing ("" otherwise)."""
    warnings: tuple[str, ...]
    """The diff's warnings, then each capture's (``A: ...``), each once."""
    tables: Tables | None
    footer: str

    @property
    def warnings_shown(self) -> int:
        """How many of :attr:`warnings` the terminal lists (:data:`MAX_WARNINGS`)."""
        return min(len(self.warnings), MAX_WARNINGS)


def build_document(
    result: DiffResult, report: DiffReport | None = None, selection: str = "", *, tables: bool = False
) -> Document:
    """The document of ``result``, once per report; with ``report`` (the captures) the sides, the
    captures' warnings and, with ``tables``, the tables too."""
    from fusiondiff.records.version import __version__

    views = question_views(result)  # each question's words once: its verdict line is its answer
    outcomes = {view.question: result.outcome(view.question) for view in views}
    return Document(
        answers=tuple(Answer(view.question, view.verdict, outcomes[view.question]) for view in views),
        selection=selection,
        label_a=result.label_a,
        label_b=result.label_b,
        origins=(
            (result.label_a, short_list(result.source_a or "?")),
            (result.label_b, short_list(result.source_b or "?")),
        ),
        sides=tuple(c.sides(report)) if report is not None else (),
        gpus=_gpus(report) if report is not None else (),
        sections=_sections(result, views, outcomes),
        no_finding="" if result.findings else NO_FINDING,
        warnings=_warnings(result, report),
        tables=_tables(report) if report is not None and tables else None,
        footer=footer(__version__),
    )


def item_of(finding: Finding, rules_by_rank: dict[int, str]) -> Item:
    """A finding as the document holds it; ``rules_by_rank`` names the findings it links to."""
    links = tuple(
        Link(heading, tuple((r, rules_by_rank.get(r, "?")) for r in ranks))
        for heading, ranks in c.finding_links(finding)
    )
    return Item(
        rank=finding.rank,
        title=wording.title(finding),
        rule=finding.rule,
        role=finding.role,
        status=status_of(finding),
        explains=explains_text(finding),
        links=links,
        evidence=tuple(wording.evidence_lines(finding)),
        peaks=node(finding.rule).peaks,
    )


def _sections(result: DiffResult, views: list[QuestionView], outcomes: dict[str, Outcome]) -> tuple[Section, ...]:
    """Each question's section, its findings ranked (failures first, then by the time they
    explain, each gap counted once) and the terminal's share of :data:`MAX_FINDINGS` counted."""
    rules_by_rank = {f.rank: f.rule for f in result.findings}
    sections = []
    budget = MAX_FINDINGS
    for view in views:
        outcome = outcomes[view.question]
        quiet = (
            view.question != KERNEL
            and not view.findings
            and outcome != "fails"
            and not result.ledger(view.question).gap_ns > 0
        )
        items = tuple(item_of(f, rules_by_rank) for f in view.findings)
        shown = min(len(items), budget)
        budget -= shown
        sections.append(Section(view.question, view.title, view.gate, view.ledger, outcome, quiet, items, shown))
    return tuple(sections)


def _warnings(result: DiffResult, report: DiffReport | None) -> tuple[str, ...]:
    """The diff's warnings, then each capture's, each said once."""
    warnings = [*result.warnings]
    if report is not None:
        for side, capture in (("A", report.a), ("B", report.b)):
            warnings += [f"{side}: {w}" for w in c.capture_warnings(capture)]
    return tuple(dict.fromkeys(warnings))


def _gpus(report: DiffReport) -> tuple[str, ...]:
    """Each side's GPU (SMs) and nvFuser version, in a line."""
    envs = (report.a.environment, report.b.environment)
    return tuple(
        f"{env.gpu_name or '?'} ({env.sm_count or '?'} SMs), nvFuser {env.nvfuser_version or '?'}" for env in envs
    )


def _tables(report: DiffReport) -> Tables:
    """The fusion and kernel table, both environments and the recorded differences."""
    timing = tuple(c.timing_rows(report, TIMING_ROWS))
    return Tables(
        timing=timing,
        timing_left_out=c.timing_rows_left_out(report, len(timing)),
        environments=tuple(c.environment_rows(report)),
        properties=tuple(c.property_rows(report)),
    )
