"""The causal model the diagnosis reasons with, declared as data: every node a rule can detect,
what kind of node it is, which question its effect is counted on, and what it follows from.

fusiondiff answers three questions about two captures, each apart (:data:`QUESTIONS`, declared
with their gates in :mod:`fusiondiff.records.gates`):

- ``kernel``: does the same fusion's kernel time differ, and why (Thunder #1869);
- ``host``: does the host time per call differ, measured like for like (``fd.execute`` against
  ``fd.execute``), and does a side's host keep its GPU waiting (Thunder #1852);
- ``fidelity``: what B runs differently from A (definition, constants, inputs, options, variables).

A rule only detects a node (a finding's ``rule`` is the node's name). Whether the finding is a
root cause, a mechanism or a failure, and which findings it follows from, is read here. Root
causes are what a user can change (the GPU, the software, the timing protocol, an input's storage
offset, an option...); mechanisms are how they act (the clocks, the flush size, nvFuser's
segmentation and kernel variant, the block-level shape). The ledger
(:mod:`fusiondiff.diff.ledger`) gives each question's gap to the nodes present that have no present
ancestor, so a mechanism is counted only where none of the causes it follows from was recorded.

Adding a rule is adding its node here with its edges, out of it and into it (the ``follows_from``
of what can follow from it), its line in :data:`MEANINGS`, and its rule to ``findings.RULES``
(ARCHITECTURE.md's recipe lists the rest).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from fusiondiff.diff.records import Question, Role
from fusiondiff.records.gates import KERNEL
from fusiondiff.records.gates import QUESTIONS as QUESTIONS


@dataclass(frozen=True)
class Node:
    """One thing a rule can detect."""

    name: str
    """The rule's name (``storage_offset``), which its findings carry as ``Finding.rule``."""
    role: Role
    """``setup`` and ``cause``: root causes (how it was measured and where; what the fusion was
    given); ``consequence``: a mechanism; ``failure``; ``circumstance``: reported beside a gap,
    never counted in it; ``unexplained``."""
    question: Question
    """The question whose ledger its findings are counted on (one, so no finding counts twice)."""
    follows_from: tuple[str, ...] = ()
    """The nodes it can follow from: where one of them is present for the same fusion, this node is
    evidence of it and gets none of the gap."""
    explains: bool = True
    """False for what describes how the time went without saying why (the block level), and for
    circumstances: present, they still take no share of a gap."""
    fidelity: bool = False
    """What B runs differently from A: listed under the fidelity question, with the kernel time
    the kernel ledger credits to it."""
    host: bool = False
    """Can also change the host time of a call (``fd.execute``): a root of the host ledger."""
    peaks: bool = False
    """Its finding carries each kernel against the two GPUs' measured peaks: every format shows
    that table under it."""


# what nvFuser compiles from: where one of these differs, the kernels it makes follow from it
_COMPILED_FROM = (
    "gpu",
    "versions",
    "definition",
    "constant_precision",
    "storage_offset",
    "input_alignment",
    "input_strides",
    "dtype_shape",
    "index_value_range",
    "scalar_value",
    "options",
    "env_vars",
)
# what nvFuser's segmenter and schedulers choose from (the segments, each kernel's grid, block,
# cluster and shared memory): the shapes, dtypes, strides and alignment, the options, the device;
# a constant's value is not among them, only a literal in the CUDA source
_SCHEDULED_FROM = tuple(name for name in _COMPILED_FROM if name != "constant_precision")
# what holds a GPU's clocks or SMs while a fusion runs
_MACHINE = ("gpu", "other_work", "other_processes", "clocks_locked", "gpu_throttled")
_KERNELS = ("segmentation", "kernel_variant", "cuda_source", "runtime_reuse")
_BLOCKS = (*_COMPILED_FROM, *_MACHINE, *_KERNELS, "clocks")


def _fidelity_root(name: str, *follows: str, host: bool = False) -> Node:
    return Node(name, "cause", "kernel", follows, fidelity=True, host=host)


def _block(name: str) -> Node:
    return Node(name, "consequence", "kernel", _BLOCKS, explains=False)


NODES: tuple[Node, ...] = (
    # failures: a side has no numbers for the fusion; the cause the data shows comes first
    Node("index_out_of_range", "failure", "kernel", ("index_value_range",)),
    Node("view_past_storage", "failure", "kernel", ("storage_offset", "input_strides", "dtype_shape")),
    Node("failed_execution", "failure", "kernel", ("index_out_of_range", "view_past_storage")),
    # root causes of the setup: where and how each side was measured, and what it ran beside
    Node("gpu", "setup", "kernel", host=True, peaks=True),
    Node("versions", "setup", "kernel", host=True),
    Node("runtime_env", "setup", "kernel", host=True),
    Node("measurement", "setup", "kernel"),
    Node("l2_mode", "setup", "kernel", ("measurement",)),
    Node("other_work", "setup", "kernel"),
    Node("other_processes", "setup", "kernel"),
    Node("clocks_locked", "setup", "kernel"),
    # root causes in what the fusion was and was given: what a faithful repro keeps
    _fidelity_root("definition", host=True),
    _fidelity_root("constant_precision"),
    _fidelity_root("storage_offset"),
    _fidelity_root("input_alignment", "storage_offset"),
    _fidelity_root("input_strides", "definition"),
    _fidelity_root("dtype_shape", "definition", host=True),
    _fidelity_root("index_value_range"),
    _fidelity_root("scalar_value"),
    _fidelity_root("options", host=True),
    _fidelity_root("env_vars", host=True),
    # mechanisms of the machine: the flush buffer is twice the GPU's L2, the clocks are the GPU's
    Node("flush_size", "consequence", "kernel", ("gpu", "measurement")),
    Node("gpu_throttled", "consequence", "kernel", ("gpu", "other_work", "other_processes")),
    Node("clocks", "consequence", "kernel", _MACHINE),
    # mechanisms of the compiler: what nvFuser made of the fusion
    Node("segmentation", "consequence", "kernel", _SCHEDULED_FROM),
    Node("kernel_variant", "consequence", "kernel", (*_SCHEDULED_FROM, "segmentation")),
    Node("cuda_source", "consequence", "kernel", (*_COMPILED_FROM, "segmentation", "kernel_variant")),
    Node("runtime_reuse", "consequence", "kernel", _COMPILED_FROM),
    # the block level, measured: SMs held from a kernel on the same grid are the machine's doing
    # (other work, a partition: where none of those was recorded, the block level is the evidence);
    # with another grid, the kernel variant's
    Node("blocks_fewer_sms", "setup", "kernel", (*_COMPILED_FROM, *_MACHINE, *_KERNELS)),
    Node("blocks_starts_delayed", "setup", "kernel", _MACHINE),
    # the rest say how the time went on the SMs, not why
    _block("blocks_extra_wave"),
    _block("blocks_tail"),
    _block("blocks_every_cta_slower"),
    _block("blocks_few_ctas_slower"),
    # the host: a side whose calls keep its GPU waiting, reported, never blamed on the other side
    Node("host_bound", "circumstance", "host", explains=False),
    # a side whose calls return when their kernels end: the host waits for the GPU, not the reverse
    Node("waits_for_kernels", "circumstance", "host", explains=False),
    # a gap that nothing recorded explains
    Node("unexplained", "unexplained", "kernel", explains=False),
)
"""Every node, upstream first."""

MEANINGS: dict[str, str] = {
    "index_out_of_range": "a side failed, and its index values fall outside the table they index",
    "view_past_storage": "a side failed, and an input's view reaches past its storage",
    "failed_execution": "a side's execution failed (a compile error, an illegal address)",
    "gpu": "another GPU model (its name, SM count, L2, clocks), with the kernels nvFuser launched otherwise there, and, where both captures measured their DRAM peak, each kernel's time against what the two peaks predict for a memory-bound kernel: those beyond the noise floor named (\"runs at 64 % of peak on A and 49 % on B: B leaves more on the table\", a finding for nvFuser's heuristics), the rest in a table under the finding; where a side has no peak, one line says why",
    "versions": "another driver, CUDA, torch, nvFuser, Thunder or Python version",
    "runtime_env": "the CUDA and PyTorch variables that change how kernels run differ between the sides (`CUDA_LAUNCH_BLOCKING`, allocator settings...)",
    "measurement": "the two sides were timed by different methods or warm-ups, or a side's numbers are weak (few samples, missing events)",
    "l2_mode": "one side flushed L2 before each sample, the other did not",
    "other_work": "other threads of the process ran kernels or copies during the sample windows",
    "other_processes": "other processes held a context on the GPU (no share of a gap when NVML never saw them at work)",
    "clocks_locked": "the SM clock was locked to another frequency",
    "definition": "the fusion's definition differs",
    "constant_precision": "a constant in the definition was rounded (nvFuser prints 6 significant digits)",
    "storage_offset": "an input starts at another storage offset (and alignment)",
    "input_alignment": "an input's data pointer is aligned differently",
    "input_strides": "an input's strides differ",
    "dtype_shape": "an input's dtype or shape differs",
    "index_value_range": "an integer input's values span another range",
    "scalar_value": "a scalar input has another value",
    "options": "other nvFuser enable/disable options",
    "env_vars": "other `NVFUSER_*` environment variables",
    "flush_size": "the L2 flush buffer differs in size (twice each GPU's L2: follows from the GPU)",
    "gpu_throttled": "power or thermal limits held the clocks back while the samples ran (follows from other work, other processes, the GPU)",
    "clocks": "the SM or memory clock differs between the sides, or moved during a fusion's samples",
    "segmentation": "nvFuser segmented the fusion into other kernels",
    "kernel_variant": "another kernel variant (launch configuration, registers)",
    "cuda_source": "the kernels' CUDA source differs (captured with `--cuda-source`)",
    "runtime_reuse": "a cached runtime was reused on one side and not the other",
    "blocks_fewer_sms": "fewer SMs ran the kernel's CTAs: on the same grid, the machine held SMs ([block level](block-level.md))",
    "blocks_starts_delayed": "SMs started their first CTA later: held by other work",
    "blocks_extra_wave": "the kernel needed another wave of CTAs",
    "blocks_tail": "a longer tail: few CTAs running at the end",
    "blocks_every_cta_slower": "every CTA ran longer",
    "blocks_few_ctas_slower": "a few CTAs ran much longer",
    "host_bound": "a side's call takes longer on the host than its kernels, more than on the other side: its GPU waits (reported, never counted in a gap)",
    "waits_for_kernels": "a side's calls return when their kernels end (launches that block, an allocation that synchronises): the host waits for the GPU, not host-bound (listed, never gated)",
    "unexplained": "the times differ and nothing recorded explains it: the ledger's residual",
}
"""What each node means, in a line: the docs' table of rules is made from these and :data:`NODES`
(:func:`rules_table`), and a test fails when the docs drift from them."""

GRAPH: dict[str, Node] = {node.name: node for node in NODES}

_UNKNOWN = Node("?", "unexplained", "kernel", explains=False)
"""A rule this graph does not know (a diff record from another version): counted on nothing."""


def node(name: str) -> Node:
    """The node of a rule's name; a rule unknown here explains nothing."""
    return GRAPH.get(name, _UNKNOWN)


_POSITION = {n.name: i for i, n in enumerate(NODES)}


def declared_position(name: str) -> int:
    """Where ``name`` stands in :data:`NODES` (upstream first; a rule unknown here, after all):
    the stable order of what nothing else tells apart, such as two causes holding one gap jointly.
    It is an order to list them in, not a judgement between them, so it is not their names'."""
    return _POSITION.get(name, len(NODES))


@functools.cache
def ancestors(name: str) -> frozenset[str]:
    """Every node ``name`` follows from, directly or through others."""
    found: set[str] = set()
    todo = list(node(name).follows_from)
    while todo:
        parent = todo.pop()
        if parent not in found:
            found.add(parent)
            todo.extend(node(parent).follows_from)
    return frozenset(found)


def rules_table() -> list[str]:
    """The docs' table of rules (``docs/concepts/findings.md``), one row per node, upstream first:
    its name, its role (with the question where it is not the kernel question's) and what it means."""
    rows = ["| rule | role | what it means |", "|---|---|---|"]
    for n in NODES:
        role = n.role if n.question == KERNEL else f"{n.role} ({n.question})"
        rows.append(f"| `{n.name}` | {role} | {MEANINGS[n.name]} |")
    return rows
