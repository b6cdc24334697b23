"""Findings: one rule per cause, run over the diff, then ranked.

Each rule is a small function in ``rules_inputs``, ``rules_fusion`` or ``rules_setup``, listed in
:data:`RULES`. Ranking (:func:`rank_findings`):

1. Every finding has ``explained_ns``: the absolute median gap of the kernels it names, else of
   the fusions it names (nothing for fusions whose verdict is SAME); setup findings get the gap of
   every fusion they invalidate. Other processes that NVML never saw at work
   (:func:`~fusiondiff.diff.rules_environment.not_seen_at_work`) are sorted as if they explained
   nothing and tie after the consequences, so they rank after every recorded difference and keep
   only the gap left.
2. A consequence (segmentation, kernel variant, CUDA source, runtime history) whose fusions are all
   named by a cause is *explained by* that cause: it never ranks above it (its sort value is capped
   at the cause's ``explained_ns``), it lists the cause's rank in ``caused_by``, and the cause lists
   it in ``supported_by``. So a storage offset that led to another kernel variant ranks first, with
   the variant as its supporting evidence, even when kernel medians sum to a bit more than the
   fusion's median gap.
3. Failures first (a side without numbers); then by that value, largest first; ties go setup,
   cause, consequence, unexplained (a gap measured under two protocols is itself in doubt, so fixing
   the setup comes first), then the order of :data:`RULES`, then fusion label, then the order
   the rule yielded them in (an input rule: by input index).
4. The gap is counted once (:func:`_attribute_once`): the highest-ranked finding that explains a
   fusion's gap keeps it; consequences of a ranked cause become its evidence and explain nothing
   themselves, and later findings of the same fusions explain only what is left.

Pairs whose time differs (fusion or kernel FASTER/SLOWER) with no finding at all get an
``unexplained`` finding: nothing recorded differs, which points at the machine or process state,
not at the fusion.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence

from fusiondiff.diff import (
    rules_blocks,
    rules_environment,
    rules_failure,
    rules_fusion,
    rules_host,
    rules_inputs,
    rules_setup,
)
from fusiondiff.diff.context import Rule, RuleContext, fusion_gap_ns, kernel_gap_ns, kernel_label, make_finding
from fusiondiff.diff.records import Evidence, Finding

RULES: tuple[Rule, ...] = (
    # failures: a side has no numbers for the fusion; the cause the data shows comes first
    rules_failure.index_out_of_range,
    rules_failure.view_past_storage,
    rules_failure.failed_execution,
    # setup: what the timing ran beside (other work, other processes, throttling, a clock setting):
    # before the measurement's own lines, since a clock that dropped under other work is its evidence
    rules_environment.other_work,
    rules_environment.other_processes,
    rules_environment.gpu_throttled,
    rules_environment.clocks_locked,
    # setup: how and where it was measured. A different timing method comes before the L2 mode:
    # the seed's method, for one, has no L2 control at all, so the L2 difference is part of it.
    rules_setup.measurement,
    rules_setup.l2_mode,
    rules_setup.gpu_or_versions,
    # a cause on the host's axis: the GPU waits for the calls (host time, kept apart from kernel time)
    rules_host.host_bound,
    # causes: what the fusion was. Another definition comes first: its inputs are expected to
    # differ with it (a stride_order in define_tensor goes with other strides).
    rules_fusion.definition,
    # causes: what the fusion was given
    rules_inputs.storage_offset,
    rules_inputs.input_alignment,
    rules_inputs.input_strides,
    rules_inputs.dtype_shape,
    rules_inputs.index_value_range,
    rules_inputs.scalar_value,
    rules_fusion.constant_precision,
    rules_fusion.options,
    rules_setup.env_vars,
    # consequences: what nvFuser made of it
    rules_fusion.segmentation,
    rules_fusion.kernel_variant,
    rules_fusion.cuda_source,
    rules_fusion.runtime_reuse,
    # the block level, measured (fusiondiff.blocks): how the kernels ran on the SMs
    rules_blocks.blocks_fewer_sms,
    rules_blocks.blocks_starts_delayed,
    rules_blocks.blocks_extra_wave,
    rules_blocks.blocks_tail,
    rules_blocks.blocks_every_cta_slower,
    rules_blocks.blocks_few_ctas_slower,
)
"""Every rule, in tie-break order."""

_ROLE_ORDER = {"failure": -1, "setup": 0, "cause": 1, "consequence": 2, "unexplained": 3}
_DIRECTIONS = ("FASTER", "SLOWER")


def unexplained(ctx: RuleContext, found: Sequence[Finding]) -> list[Finding]:
    """Fusions (or their kernels) that are faster or slower although no rule found anything:
    the fusion's medians and ``verdict`` (its reason as ``subject``), and each kernel's that is
    faster or slower (its name as ``subject``)."""
    # a block-level consequence says how the time went, not why: the pair stays unexplained
    # nor does host time (rules_host.KEPT_APART): it explains no kernel gap
    covered = {
        label
        for f in found
        for label in f.fusions
        if not (f.data and f.role == "consequence") and f.rule not in rules_host.KEPT_APART
    }
    findings = []
    for pair in ctx.pairs:
        kernels = [k for k in pair.kernels if k.timing.verdict in _DIRECTIONS]
        if pair.label in covered or pair.failed or (pair.timing.verdict not in _DIRECTIONS and not kernels):
            continue
        t = pair.timing
        data = [
            Evidence("fusion_median_ns", t.median_a_ns, t.median_b_ns, "ns"),
            Evidence("verdict", t.verdict, t.verdict, "text", subject=t.reason),
        ]
        for k in kernels:
            name = k.normalized_name
            data += [
                Evidence("kernel_median_ns", k.timing.median_a_ns, k.timing.median_b_ns, "ns", subject=name),
                Evidence("kernel_verdict", k.timing.verdict, k.timing.verdict, "text", subject=name),
            ]
        explained = fusion_gap_ns(pair) or sum(kernel_gap_ns(k) for k in kernels)
        labels = [kernel_label(pair, k) for k in kernels]
        findings.append(make_finding("unexplained", "unexplained", data, [pair.label], explained, labels))
    return findings


def find_findings(ctx: RuleContext) -> tuple[Finding, ...]:
    """Run every rule over the context and return the findings ranked."""
    found = [finding for rule in RULES for finding in rule(ctx)]
    found += unexplained(ctx, found)
    return rank_findings(found)


def rank_findings(findings: Sequence[Finding]) -> tuple[Finding, ...]:
    """Rank findings (see the module docstring) and link consequences to their causes."""
    rule_order = {rule.__name__: i for i, rule in enumerate(RULES)}
    causes_by_label: dict[str, list[int]] = defaultdict(list)
    for i, f in enumerate(findings):
        if f.role == "cause" and f.rule not in rules_host.KEPT_APART:  # host time leads to no kernel
            for label in f.fusions:
                causes_by_label[label].append(i)

    causes_of: dict[int, list[int]] = {}
    # other processes never seen at work rank after the causes and keep only what is left
    idle = [rules_environment.not_seen_at_work(f) for f in findings]
    sort_ns = [0.0 if idle[i] else f.explained_ns for i, f in enumerate(findings)]
    role_order = [_ROLE_ORDER["consequence"] + 0.5 if idle[i] else _ROLE_ORDER[f.role] for i, f in enumerate(findings)]
    for i, f in enumerate(findings):
        if f.role != "consequence" or not f.fusions:
            continue
        wanted = set(f.fusions)
        covering = [c for c in causes_by_label[f.fusions[0]] if wanted <= set(findings[c].fusions)]
        if covering:
            causes_of[i] = covering
            sort_ns[i] = min(sort_ns[i], max(findings[c].explained_ns for c in covering))

    order = sorted(
        range(len(findings)),
        key=lambda i: (
            findings[i].role != "failure",  # a side without numbers comes before any timing
            -sort_ns[i],
            role_order[i],
            rule_order.get(findings[i].rule, len(rule_order)),
            findings[i].fusions[:1],
        ),
    )
    rank_of = {i: r for r, i in enumerate(order, start=1)}
    supported: dict[int, list[int]] = defaultdict(list)
    for consequence, causes in causes_of.items():
        for cause in causes:
            supported[cause].append(rank_of[consequence])
    ranked = [
        dataclasses.replace(
            findings[i],
            rank=rank_of[i],
            caused_by=tuple(sorted(rank_of[c] for c in causes_of.get(i, ()))),
            supported_by=tuple(sorted(supported.get(i, ()))),
        )
        for i in order
    ]
    return tuple(_attribute_once(ranked))


def _attribute_once(ranked: Sequence[Finding]) -> list[Finding]:
    """Count each fusion's gap once, for the highest-ranked finding that explains it.

    A consequence of a ranked cause is that cause's evidence: it explains nothing itself. A finding
    whose fusions were all explained above it explains nothing more; one that shares some of them
    keeps the share of its (upper-bound) figure that the others' fusions make up.
    """
    claimed: set[str] = set()
    out = []
    for f in ranked:
        explained = f.explained_ns
        if f.rule in rules_host.KEPT_APART:  # host time: its own axis, no kernel gap claimed
            out.append(f)
            continue
        if f.role == "consequence" and f.caused_by:
            explained = 0.0
        elif f.fusions and explained > 0:
            fresh = [label for label in f.fusions if label not in claimed]
            explained *= len(fresh) / len(f.fusions)
        if explained > 0:
            claimed.update(f.fusions)
        out.append(f if explained == f.explained_ns else dataclasses.replace(f, explained_ns=explained))
    return out
