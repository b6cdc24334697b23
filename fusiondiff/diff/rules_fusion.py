"""Rules about the fusion itself (definition, constants, options) and what nvFuser made of it
(segments, kernel variants, generated source, runtime cache history).

Each finding's evidence is data; the words are :mod:`fusiondiff.report.words.fusion_words`'. A kernel's
evidence names the kernel (its normalized name) as ``subject``; a recorded property's evidence is
the property's path as ``field`` with both values as recorded.
"""

from __future__ import annotations

from collections.abc import Iterator

from fusiondiff.diff.compare import lossy_constants, rounded_apart
from fusiondiff.diff.context import RuleContext, kernel_label, make_finding
from fusiondiff.diff.records import Evidence, Finding, FusionPair, KernelPair
from fusiondiff.records.definition import canonical_definition
from fusiondiff.records.model import kernel_history


def definition(ctx: RuleContext) -> Iterator[Finding]:
    """The printed definitions differ (another definition hash): both hashes, then the ops that
    differ (``definition_diff``: ``-`` lines from A, ``+`` from B) as ``subject``."""
    for pair in ctx.pairs:
        if not any(c.category == "definition" for c in pair.changes):
            continue
        data = [
            Evidence("structure_hash", ctx.fusion_a(pair).structure_hash, ctx.fusion_b(pair).structure_hash, "text")
        ]
        data += [Evidence("definition_diff", None, None, "text", subject=line) for line in pair.definition_diff]
        yield make_finding("definition", data, [pair.label])


def constant_precision(ctx: RuleContext) -> Iterator[Finding]:
    """A constant printed with 6 significant digits where the other side knows more digits:
    ``rounded_in_b`` (A's exact value, B's printed literal), ``rounded_in_a`` (A's printed literal,
    B's exact value), and both sides' ``exact_constants``."""
    for pair, (fa, fb) in zip(ctx.pairs, ctx.records):
        if fa.exact_constants == fb.exact_constants:
            continue  # each side ran with every exact value the other knows: nothing was rounded
        data = [
            Evidence("rounded_in_b", value, literal, "text")
            for literal, value in lossy_constants(fb.definition, fa.exact_constants, fb.exact_constants)
        ]
        data += [
            Evidence("rounded_in_a", literal, value, "text")
            for literal, value in lossy_constants(fa.definition, fb.exact_constants, fa.exact_constants)
        ]
        if data or rounded_apart(fa.exact_constants, fb.exact_constants):
            data.append(Evidence("exact_constants", tuple(fa.exact_constants), tuple(fb.exact_constants), "value"))
            yield make_finding("constant_precision", data, [pair.label])


def options(ctx: RuleContext) -> Iterator[Finding]:
    """Other nvFuser enable/disable options."""
    for pair in ctx.pairs:
        data = [Evidence(c.path, c.a, c.b, "value") for c in pair.changes if c.category == "options"]
        if data:
            yield make_finding("options", data, [pair.label])


def segmentation(ctx: RuleContext) -> Iterator[Finding]:
    """nvFuser split the fusion differently: other schedulers, or other kernels launched (each
    kernel of one side only with its median: ``kernel_only_in_a``, ``kernel_only_in_b``)."""
    for pair, (fa, fb) in zip(ctx.pairs, ctx.records):
        if pair.failed:
            continue  # a failed execution has no segments: the failure rules say why
        # the comparer's segmentation change is exactly this: other schedulers, in group order
        schedulers_changed = any(c.category == "segmentation" for c in pair.changes)
        if not schedulers_changed and not pair.unmatched_kernels:
            continue
        data = [
            Evidence("schedulers", tuple(fa.segmentation.schedulers), tuple(fb.segmentation.schedulers), "value"),
            Evidence("kernels", len(fa.kernels), len(fb.kernels), "count"),
        ]
        data += [
            Evidence(
                f"kernel_only_in_{k.side.lower()}", *_on_side(k.side, k.median_ns), "ns", subject=k.normalized_name
            )
            for k in pair.unmatched_kernels
        ]
        kernels = [f"{pair.label}/{k.normalized_name}" for k in pair.unmatched_kernels]
        yield make_finding("segmentation", data, [pair.label], kernels)


def _on_side(side: str, value: float) -> tuple[float | None, float | None]:
    return (value, None) if side == "A" else (None, value)


def _kernel_finding(pair: FusionPair, kernels: list[KernelPair], rule: str, data: list[Evidence]) -> Finding:
    labels = [kernel_label(pair, k) for k in kernels]
    return make_finding(rule, data, [pair.label], labels)


def kernel_variant(ctx: RuleContext) -> Iterator[Finding]:
    """Same kernel slot (scheduler, group) launched with another configuration: each launch field
    that differs (``launch.block``), then the kernel's ``median_ns``."""
    for pair in ctx.pairs:
        kernels, data = [], []
        for k in pair.kernels:
            launch = [c for c in k.changes if c.category == "launch"] if k.changes else []
            if not launch:
                continue
            kernels.append(k)
            data += [Evidence(c.path, c.a, c.b, "value", subject=k.normalized_name) for c in launch]
            data.append(
                Evidence("median_ns", k.timing.median_a_ns, k.timing.median_b_ns, "ns", subject=k.normalized_name)
            )
        if kernels:
            yield _kernel_finding(pair, kernels, "kernel_variant", data)


def cuda_source(ctx: RuleContext) -> Iterator[Finding]:
    """Same kernel slot, other generated CUDA source (``source_hash``); ``printer_casts`` when the
    two printed definitions are one fusion but differ in the casts nvFuser's printer adds."""
    for pair in ctx.pairs:
        kernels = [k for k in pair.kernels if k.changes and any(c.category == "source" for c in k.changes)]
        if kernels:
            data = [
                Evidence("source_hash", c.a, c.b, "text", subject=k.normalized_name)
                for k in kernels
                for c in k.changes
                if c.category == "source"
            ]
            fa, fb = ctx.fusion_a(pair), ctx.fusion_b(pair)
            if (
                canonical_definition(fa.definition) != canonical_definition(fb.definition)
                and fa.structure_hash == fb.structure_hash
            ):
                data.append(Evidence("printer_casts", None, None, "fact"))
            yield _kernel_finding(pair, kernels, "cuda_source", data)


def runtime_reuse(ctx: RuleContext) -> Iterator[Finding]:
    """Raw kernel names show another concretization or runtime index: the kernel came out of a
    different cache history. The fusion index (``f``) is left out: it counts every fusion the
    process built before, so a session and a one-fusion script always differ there. Per kernel:
    ``concretization`` and ``runtime`` (the ``c`` and ``r`` of its name) and the ``launched_name``."""
    for pair in ctx.pairs:
        kernels, data = [], []
        for k in pair.kernels:
            if k.name_a == k.name_b:
                continue  # one name, one history
            ha, hb = kernel_history(k.name_a), kernel_history(k.name_b)
            if not ha or not hb or ha[1:] == hb[1:]:
                continue
            kernels.append(k)
            name = k.normalized_name
            data += [
                Evidence("concretization", ha[1], hb[1], "id", subject=name),
                Evidence("runtime", ha[2], hb[2], "id", subject=name),
                Evidence("launched_name", k.name_a.split("(")[0], k.name_b.split("(")[0], "text", subject=name),
            ]
        if kernels:
            yield _kernel_finding(pair, kernels, "runtime_reuse", data)
