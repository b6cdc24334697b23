"""Findings: one rule per node of the causal model, run over the diff, then counted and ranked.

Each rule is a small function in a ``rules_*`` module, listed in :data:`RULES`; it detects a node
of :mod:`fusiondiff.diff.causes` and yields findings with their evidence as data. What a finding
is (its role, its question, what it follows from) is the causal model's; what it explains is the
ledger's (:mod:`fusiondiff.diff.ledger`), which apportions each question's gap once; the order
of :data:`RULES` decides nothing.

Pairs whose time differs (fusion or kernel FASTER/SLOWER) for which nothing present explains
anything get an ``unexplained`` finding: nothing recorded differs, which points at the machine or
process state, not at the fusion.
"""

from __future__ import annotations

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
from fusiondiff.diff.context import Rule, RuleContext, kernel_label, make_finding
from fusiondiff.diff.ledger import credit, ledgers, present_by_label, rank, settle
from fusiondiff.diff.records import Evidence, Finding, Ledger
from fusiondiff.records.gates import KERNEL

RULES: tuple[Rule, ...] = (
    # failures: a side has no numbers for the fusion; the cause the data shows comes first
    rules_failure.index_out_of_range,
    rules_failure.view_past_storage,
    rules_failure.failed_execution,
    # setup: what the timing ran beside (other work, other processes, throttling, a clock setting)
    rules_environment.other_work,
    rules_environment.other_processes,
    rules_environment.gpu_throttled,
    rules_environment.clocks_locked,
    # setup: how and where it was measured, and the mechanisms of the machine
    rules_setup.measurement,
    rules_setup.l2_mode,
    rules_setup.flush_size,
    rules_setup.clocks,
    rules_setup.gpu,
    rules_setup.versions,
    rules_setup.runtime_env,
    # the host question: a side whose calls keep its GPU waiting
    rules_host.host_bound,
    rules_host.waits_for_kernels,
    # causes: what the fusion was
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
    # the block level, measured (fusiondiff.records.blocks): how the kernels ran on the SMs
    rules_blocks.blocks_fewer_sms,
    rules_blocks.blocks_starts_delayed,
    rules_blocks.blocks_extra_wave,
    rules_blocks.blocks_tail,
    rules_blocks.blocks_every_cta_slower,
    rules_blocks.blocks_few_ctas_slower,
)
"""Every rule. Their order is the order of the evidence they yield, nothing more."""

_DIRECTIONS = ("FASTER", "SLOWER")


def unexplained(ctx: RuleContext, found: Sequence[Finding]) -> list[Finding]:
    """Fusions (or their kernels) that are faster or slower although nothing present explains any
    of it: the fusion's medians and ``verdict`` (its reason as ``subject``), and each kernel's that
    is faster or slower (its name as ``subject``). What describes how the time went (the block
    level) or was not seen acting (an idle process) leaves a pair unexplained."""
    covered = present_by_label(found, KERNEL)
    findings = []
    for pair in ctx.pairs:
        kernels = [k for k in pair.kernels if k.timing.verdict in _DIRECTIONS]
        if covered.get(pair.label) or pair.failed or (pair.timing.verdict not in _DIRECTIONS and not kernels):
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
        labels = [kernel_label(pair, k) for k in kernels]
        findings.append(make_finding("unexplained", data, [pair.label], labels))
    return findings


def find_findings(ctx: RuleContext) -> tuple[tuple[Finding, ...], tuple[Ledger, ...]]:
    """Run every rule over the context; return the findings, counted and ranked, and the ledgers."""
    found = [finding for rule in RULES for finding in rule(ctx)]
    found += unexplained(ctx, found)
    counted, allocation = ledgers(ctx.pairs, found)
    return settle(rank(credit(found, ctx.pairs, allocation)), ctx.pairs), counted
