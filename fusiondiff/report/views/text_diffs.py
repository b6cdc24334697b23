"""The reports' unified diffs of two texts of one fusion or kernel (printed definitions, generated
CUDA sources), with lines lined up ignoring nvFuser's numbered value names; read through
:mod:`fusiondiff.report.views.content` by the Markdown and HTML renderers."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from fusiondiff.records.kernel_names import parse_kernel_name
from fusiondiff.report.interface import DiffReport


@dataclass(frozen=True)
class TextDiff:
    """A unified diff of two texts (definitions, CUDA sources) of one fusion or kernel."""

    title: str
    lines: tuple[str, ...]
    """``difflib.unified_diff`` lines, headers included; empty when the texts are the same."""
    note: str = ""

    @property
    def added(self) -> int:
        return sum(1 for line in self.lines[2:] if line.startswith("+"))

    @property
    def removed(self) -> int:
        return sum(1 for line in self.lines[2:] if line.startswith("-"))


_VALUE_NAME = re.compile(r"\b[A-Za-z]{1,2}\d+\b")
"""Names that nvFuser numbers as it builds (``tv6``, ``c44``, ``T82``, ``i13``, ``b10``): they shift
when one statement is added, so lines are lined up with them blanked out."""

NAME_BLIND_NOTE = (
    "lines are lined up ignoring numbered value names (tv6, T82, i13...), which shift when a statement is added"
)


def unified(text_a: str, text_b: str, name_a: str, name_b: str, context: int = 3) -> tuple[str, ...]:
    """A unified diff of two texts in which lines differing only in numbered value names count as
    the same line (shown as A has it): what remains is what was added, removed or changed."""
    lines_a, lines_b = text_a.splitlines(), text_b.splitlines()
    keys_a = [_VALUE_NAME.sub("#", line) for line in lines_a]
    keys_b = [_VALUE_NAME.sub("#", line) for line in lines_b]
    out: list[str] = []
    for group in difflib.SequenceMatcher(None, keys_a, keys_b, autojunk=False).get_grouped_opcodes(context):
        first, last = group[0], group[-1]
        out.append(f"@@ -{_span(first[1], last[2])} +{_span(first[3], last[4])} @@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + line for line in lines_a[i1:i2]]
                continue
            out += ["-" + line for line in lines_a[i1:i2]]
            out += ["+" + line for line in lines_b[j1:j2]]
    return (f"--- {name_a}", f"+++ {name_b}", *out) if out else ()


def _span(start: int, stop: int) -> str:
    length = stop - start
    return f"{start + 1 if length else start},{length}" if length != 1 else f"{start + 1}"


def definition_diffs(report: DiffReport) -> list[TextDiff]:
    """The printed definitions of every matched pair whose text differs."""
    diffs = []
    for pair in report.result.pairs:
        fa, fb = report.fusion_a(pair), report.fusion_b(pair)
        if fa.definition == fb.definition:
            continue
        lines = unified(fa.definition, fb.definition, f"A/{fa.name}", f"B/{fb.name}")
        if not lines:
            continue
        graph = (
            "the same fusion graph (equal structural hash): statement order or no-op casts differ"
            if fa.structure_hash == fb.structure_hash
            else "different fusion graphs (structural hashes differ)"
        )
        diffs.append(TextDiff(pair.label, lines, f"{graph}; {NAME_BLIND_NOTE}"))
    return diffs


def _sources_by_kernel(sources: dict[str, str]) -> dict[str, tuple[str, str]]:
    return {parse_kernel_name(name)[0]: (name, text) for name, text in sources.items()}


def source_diffs(report: DiffReport) -> tuple[list[TextDiff], list[str]]:
    """Unified diffs of the generated CUDA source of matched kernels whose source differs, where
    both sides captured it; and the kernels whose source differs (by hash) but was not captured."""
    diffs, missing = [], []
    for pair in report.result.pairs:
        sources_a = _sources_by_kernel(report.fusion_a(pair).cuda_sources)
        sources_b = _sources_by_kernel(report.fusion_b(pair).cuda_sources)
        for kernel in pair.kernels:
            differs = any(c.category == "source" for c in kernel.changes)
            name = kernel.normalized_name
            if name in sources_a and name in sources_b:
                (raw_a, text_a), (raw_b, text_b) = sources_a[name], sources_b[name]
                lines = unified(text_a, text_b, f"A/{raw_a}.cu", f"B/{raw_b}.cu")
                if lines:
                    diffs.append(TextDiff(f"{pair.label} / {name}", lines, NAME_BLIND_NOTE))
            elif differs:
                missing.append(f"{pair.label} / {name}")
    return diffs, missing
