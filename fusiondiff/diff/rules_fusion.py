"""Rules about the fusion itself (definition, constants, options) and what nvFuser made of it
(segments, kernel variants, generated source, runtime cache history)."""

from __future__ import annotations

from collections.abc import Iterator

from fusiondiff.definition import canonical_definition
from fusiondiff.diff.compare import lossy_constants
from fusiondiff.diff.context import (
    RuleContext,
    dims,
    duration,
    durations,
    fusion_gap_ns,
    kernel_gap_ns,
    kernel_label,
    limited,
    make_finding,
    show,
)
from fusiondiff.diff.records import Finding, FusionPair, KernelPair
from fusiondiff.model import kernel_history


def definition(ctx: RuleContext) -> Iterator[Finding]:
    """The printed definitions differ (another definition hash)."""
    for pair in ctx.pairs:
        if not any(c.category == "definition" for c in pair.changes):
            continue
        diff = pair.definition_diff
        lines = [
            f"definition hash {ctx.fusion_a(pair).structure_hash[:12]} in A, "
            f"{ctx.fusion_b(pair).structure_hash[:12]} in B; ops that differ (- A, + B):"
        ]
        lines += limited([f"  {line}" for line in diff]) if diff else ["  (only whitespace or line order)"]
        title = f"{pair.label} runs another definition"
        yield make_finding("definition", "cause", title, lines, [pair.label], fusion_gap_ns(pair))


def _lossy_lines(
    exact_side: str, exact: tuple[str, ...], printer: str, printed: str, printer_exact: tuple[str, ...]
) -> list[str]:
    ran = (
        f"{printer} ran with {show(list(printer_exact))}" if printer_exact else f"{printer} records no exact constants"
    )
    return [
        f"{exact_side}'s constant {value} is printed as {literal} in {printer}'s definition ({ran})"
        for literal, value in lossy_constants(printed, exact, printer_exact)
    ]


def constant_precision(ctx: RuleContext) -> Iterator[Finding]:
    """A constant printed with 6 significant digits where the other side knows more digits."""
    for pair in ctx.pairs:
        fa, fb = ctx.fusion_a(pair), ctx.fusion_b(pair)
        lines = _lossy_lines("A", fa.exact_constants, "B", fb.definition, fb.exact_constants)
        lines += _lossy_lines("B", fb.exact_constants, "A", fa.definition, fa.exact_constants)
        exact_a, exact_b = sorted(fa.exact_constants), sorted(fb.exact_constants)
        if not lines and exact_a and exact_b and exact_a != exact_b:
            lines.append(f"exact constants: {show(exact_a)} in A, {show(exact_b)} in B")
        if lines:
            lines.append(
                "nvFuser prints doubles with 6 significant digits: a script built from the print runs rounded values"
            )
            title = f"{pair.label} uses constants of another precision"
            yield make_finding("constant_precision", "cause", title, lines, [pair.label], fusion_gap_ns(pair))


def options(ctx: RuleContext) -> Iterator[Finding]:
    """Other nvFuser enable/disable options."""
    for pair in ctx.pairs:
        changes = [c for c in pair.changes if c.category == "options"]
        if not changes:
            continue
        lines = [f"{c.path}: {show(c.a)} in A, {show(c.b)} in B" for c in changes]
        lines.append("options are not part of nvFuser's cache key, and its repro script drops them")
        title = f"{pair.label} runs with other enable/disable options"
        yield make_finding("options", "cause", title, lines, [pair.label], fusion_gap_ns(pair))


def segmentation(ctx: RuleContext) -> Iterator[Finding]:
    """nvFuser split the fusion differently: other schedulers, or other kernels launched."""
    for pair in ctx.pairs:
        if pair.failed:
            continue  # a failed execution has no segments: the failure rules say why
        fa, fb = ctx.fusion_a(pair), ctx.fusion_b(pair)
        schedulers_changed = fa.segmentation.schedulers != fb.segmentation.schedulers
        if not schedulers_changed and not pair.unmatched_kernels:
            continue
        lines = [
            f"segments: {'+'.join(fa.segmentation.schedulers) or '-'} in A ({len(fa.kernels)} kernel(s)), "
            f"{'+'.join(fb.segmentation.schedulers) or '-'} in B ({len(fb.kernels)} kernel(s))"
        ]
        lines += limited(
            [f"only in {k.side}: {k.normalized_name} ({duration(k.median_ns)} median)" for k in pair.unmatched_kernels]
        )
        kernels = [f"{pair.label}/{k.normalized_name}" for k in pair.unmatched_kernels]
        title = f"{pair.label} is segmented differently"
        yield make_finding("segmentation", "consequence", title, lines, [pair.label], fusion_gap_ns(pair), kernels)


def _kernel_finding(
    pair: FusionPair, kernels: list[KernelPair], rule: str, title: str, lines: list[str], note: str | None = None
) -> Finding:
    explained = sum(kernel_gap_ns(k) for k in kernels)
    labels = [kernel_label(pair, k) for k in kernels]
    evidence = limited(lines) + ([note] if note else [])
    return make_finding(rule, "consequence", title, evidence, [pair.label], explained, labels)


def kernel_variant(ctx: RuleContext) -> Iterator[Finding]:
    """Same kernel slot (scheduler, group) launched with another configuration."""
    for pair in ctx.pairs:
        kernels, lines = [], []
        for k in pair.kernels:
            launch = [c for c in k.changes if c.category == "launch"]
            if not launch:
                continue
            kernels.append(k)
            parts = ", ".join(f"{c.path.removeprefix('launch.')} {dims(c.a)} -> {dims(c.b)}" for c in launch)
            median_a, median_b = durations(k.timing.median_a_ns, k.timing.median_b_ns)
            lines.append(f"{k.normalized_name}: {parts} ({median_a} -> {median_b})")
        if kernels:
            title = f"{pair.label} launches another kernel variant (launch configuration)"
            yield _kernel_finding(pair, kernels, "kernel_variant", title, lines)


def cuda_source(ctx: RuleContext) -> Iterator[Finding]:
    """Same kernel slot, other generated CUDA source (source hash)."""
    for pair in ctx.pairs:
        kernels = [k for k in pair.kernels if any(c.category == "source" for c in k.changes)]
        if kernels:
            lines = [
                f"{k.normalized_name}: source sha256 {show(c.a)[:12]} in A, {show(c.b)[:12]} in B"
                for k in kernels
                for c in k.changes
                if c.category == "source"
            ]
            fa, fb = ctx.fusion_a(pair), ctx.fusion_b(pair)
            if (
                canonical_definition(fa.definition) != canonical_definition(fb.definition)
                and fa.structure_hash == fb.structure_hash
            ):
                lines.append(
                    "the two printed definitions are one fusion but differ in casts that nvFuser's printer adds "
                    "when a printed definition is rebuilt (to Index, or to a value's own dtype); nvFuser compiles "
                    "them as extra conversions (e.g. __to_index), which is enough to change the source"
                )
            title = f"{pair.label} compiled other CUDA source"
            yield _kernel_finding(pair, kernels, "cuda_source", title, lines)


def runtime_reuse(ctx: RuleContext) -> Iterator[Finding]:
    """Raw kernel names show another concretization or runtime index: the kernel came out of a
    different cache history. The fusion index (``f``) is left out: it counts every fusion the
    process built before, so a session and a one-fusion script always differ there."""
    for pair in ctx.pairs:
        kernels, lines = [], []
        for k in pair.kernels:
            ha, hb = kernel_history(k.name_a), kernel_history(k.name_b)
            if not ha or not hb or ha[1:] == hb[1:]:
                continue
            kernels.append(k)
            lines.append(
                f"{k.normalized_name}: c{ha[1]}_r{ha[2]} in A, c{hb[1]}_r{hb[2]} in B "
                f"({k.name_a.split('(')[0]} vs {k.name_b.split('(')[0]})"
            )
        if kernels:
            note = (
                "a runtime index above 0 means the process compiled other runtimes of this fusion "
                "before (other inputs) and nvFuser picked among them by history; "
                "NVFUSER_DISABLE=kernel_reuse on both sides rules reuse out"
            )
            title = f"{pair.label} kernels come from another runtime cache history"
            yield _kernel_finding(pair, kernels, "runtime_reuse", title, lines, note)
