"""What changed between the legacy ``nvfuser`` frontends (2023-2026) and ``nvfuser_direct``.

Read from NVIDIA/Fuser's history, not guessed: every legacy binding of
``csrc/python_frontend/python_bindings.cpp`` (later ``python/python_frontend/``) and
``nvfuser/__init__.py`` from the first commit of the repository (831821f3a, 2023-03-12) to the
removal of the legacy module (3925c6fd2, 2026-02-20), against the direct bindings of nvFuser
0.2.36 (7e04d265a: ``python/python_direct/ops.cpp``, ``ir.cpp``, ``runtime.cpp`` and
``python/nvfuser_direct/__init__.py``). The commit that made each change is named beside it; a
legacy script of any date uses some mix of these forms, so every rule applies to every script.

Data only: :mod:`fusiondiff.replay.legacy` applies it.
"""

from __future__ import annotations

from dataclasses import dataclass

DIRECT_OPS = frozenset(
    """
    abs acos acosh add addcmul argsort asin asinh atan atan2 atanh bitwise_and bitwise_left_shift
    bitwise_not bitwise_or bitwise_right_shift bitwise_xor broadcast broadcast_in_dim cast cat ceil
    clamp complex cos cosh cummax cummin cumprod cumsum cutlass_nvfp4_grouped_mm div embedding_fwd eq
    erf erfc erfcinv erfinv exp exp2 expand expm1 floor fmod frac full gather gcd ge grouped_mm gt imag
    index_select iota isfinite isinf isnan isneginf isposinf isreal le lerp lgamma linear log log10
    log1p log2 logical_and logical_not logical_or logical_right_shift lt matmul max maximum min minimum
    mod mul ne neg nextafter normal nv_block_quantize nv_grouped_block_quantize pad permute pow
    preprocess_grouped_matmul_input_sf prod rand_like randn_like real reciprocal relu remainder reshape
    round rsqrt scaled_mm scatter sdpfa_bwd sdpfa_fwd segment_set select set shape sigmoid sign signbit
    silu sin sinh size slice sqrt squeeze stride_order sub sum take_along_axis tan tanh threshold topk
    triu truediv trunc uniform var var_mean welford where
    """.split()
)
"""Every ``fd.ops`` function of nvfuser_direct 0.2.36 (``python/python_direct/ops.cpp`` at 7e04d265a)."""


@dataclass(frozen=True)
class KeywordRename:
    """A keyword argument that nvfuser_direct spells differently."""

    call: str
    """``ops.<name>`` for an ``fd.ops`` function, ``<name>`` for a FusionDefinition method."""
    old: str
    new: str
    source: str
    """The NVIDIA/Fuser commit that renamed it, or where the direct binding spells it so."""


KEYWORD_RENAMES = (
    *(
        KeywordRename(f"ops.{op}", old, new, "7d7735c5d 2024-02-08 'Rename axes= to dims= in frontend' (#1741)")
        for op in ("sum", "max", "min", "prod")
        for old, new in (("axes", "dims"), ("axis", "dim"))
    ),
    KeywordRename("ops.var", "axes", "dims", "7d7735c5d 2024-02-08 (#1741)"),
    KeywordRename("ops.var_mean", "axes", "dims", "7d7735c5d 2024-02-08 (#1741)"),
    KeywordRename("ops.broadcast_in_dim", "output_shape", "shape", "5f60a5976 2023-08-16 (#721)"),
    KeywordRename("ops.full", "size", "shape", "e5ef1a229 2023-08-09 'Fix ops.full printing' (#593)"),
    KeywordRename("ops.full", "arg", "fill_value", "e5ef1a229 2023-08-09 (#593)"),
    KeywordRename("ops.gather", "arg1", "arg", "direct ops.cpp: gather(arg, index, dim)"),
    KeywordRename("ops.take_along_axis", "arg1", "arg", "direct ops.cpp: take_along_axis(arg, index, dim)"),
    KeywordRename("ops.scatter", "arg1", "arg", "direct ops.cpp: scatter(arg, index, src, dim)"),
    KeywordRename("ops.triu", "input", "arg", "direct ops.cpp: triu(arg, diagonal)"),
    KeywordRename("ops.sdpfa_bwd", "log_sumexp", "logsumexp", "af00238ed 2026-01-20 (#5849)"),
    KeywordRename("define_tensor", "symbolic_sizes", "shape", "d4aaa039b 2023-08-09 (#701)"),
    KeywordRename("define_tensor", "contiguous", "contiguity", "59a124e43 2023-04-20 (#191)"),
    KeywordRename("define_constant", "val", "value", "441d27d30 2023-05-30 (#208)"),
)

RENAMED_METHODS = {"define_constant": "define_scalar"}
"""FusionDefinition methods with another name in nvfuser_direct (441d27d30 2023-05-30, #208:
``define_scalar`` defines constants too; ``define_constant`` stayed a deprecated alias)."""

EXECUTE_DROPPED = ("override_user_schedule", "capture_debug_output", "print_repro", "profile")
"""Keywords of the legacy ``FusionDefinition.execute`` that the direct one lacks. None changes the
kernels of an automatically scheduled fusion: user schedules, debug capture, printing, profiling."""

INTROSPECTION = {
    # legacy method: (direct attribute chain, keywords the direct method lacks)
    "cuda_code_for": ("fec.get_cuda_kernel", ("override_user_schedule",)),
    "scheduled_fusion_ir_for": ("fec.get_scheduled_ir", ("override_user_schedule",)),
    "last_scheduled_fusion_ir": ("fec.get_most_recent_scheduled_ir", ("override_user_schedule",)),
    "fusion_ir": ("fusion.print_math", ()),
}
"""Legacy FusionDefinition methods (``nvfuser/__init__.py``, 602718d75 2023-04-06) and their direct
counterparts (``python_direct/runtime.cpp``: ``FusionExecutorCache``, ``Fusion.print_math``)."""

OPERATORS = {
    "Add": "add", "Sub": "sub", "Mult": "mul", "Div": "div", "Mod": "mod", "Pow": "pow",
    "BitAnd": "bitwise_and", "BitOr": "bitwise_or", "BitXor": "bitwise_xor",
    "LShift": "bitwise_left_shift", "RShift": "bitwise_right_shift",
    "Eq": "eq", "NotEq": "ne", "Lt": "lt", "LtE": "le", "Gt": "gt", "GtE": "ge",
    "USub": "neg",
}  # fmt: skip
"""Python operators on legacy Tensor/Scalar values (``NVFUSER_PYTHON_BINDING_BINARY_OP_SPECIAL``
and ``UNARY_OP_SPECIAL`` from 831821f3a to 3925c6fd2) and the op each called. ``/`` called
``div``, which truncates (the bindings say so); nvfuser_direct's values define no operators."""

NAMES = {"Tensor": "TensorView", "Scalar": "Val"}
"""Legacy classes (type hints in printed definitions) and their direct names."""

DROPPED_NAMES = frozenset(
    {"FusionCache", "Vector", "compute_contiguity", "enable_automatic_serialization", "disable_automatic_serialization"}
)
"""Names of ``nvfuser`` that ``nvfuser_direct`` does not export; imports of them are dropped and
each use is translated or refused on its own."""

NO_OP_CALLS = frozenset({"enable_automatic_serialization", "disable_automatic_serialization"})
"""Module functions (afef1d139 2023-12-06) for the legacy FusionCache's files; direct has no such
cache, so a statement calling one is dropped."""

SUBMODULES = {
    "pytorch_utils": "pytorch_utils",
    "benchmark_utils": "benchmark_utils",
    "nvfuser_version": "nvfuser_direct_version",
}
"""Legacy submodules with a direct counterpart; any other ``nvfuser.<sub>`` cannot be translated."""

NOT_IN_DIRECT = "nothing in nvfuser_direct 0.2.36 computes it; replace it with direct ops or take it out of the script"

NO_EQUIVALENT = {
    "ops.batch_norm": "nvfuser_direct has no batch_norm; write it out with fd.ops.var_mean, sub, mul, rsqrt and add",
    "ops.index_put_accumulate": "nvfuser_direct has no index_put_accumulate; " + NOT_IN_DIRECT,
    **{
        f"ops._matmul_{layout}": (
            "removed in 8b13768a2 (2024-03-18); use fd.ops.matmul, with fd.ops.permute for a transposed operand"
        )
        for layout in ("nn", "nt", "tn", "tt")
    },
    "rand_like seed": (
        "nvfuser_direct's rand_like/randn_like take no seed; use fd.ops.uniform/normal(..., fd.ops.shape(t), "
        "rng_seed=..., rng_offset=..., dtype=...)"
    ),
    "FusionDefinition(id)": (
        "nvfuser_direct has no fusion cache to look an id up in; "
        "define the fusion again with `with FusionDefinition() as fd:`"
    ),
    "FusionDefinition(use_multidevice_executor=...)": "use nvfuser_direct's MultiDeviceExecutor instead",
    "FusionDefinition subclass": (
        "nvfuser_direct's FusionDefinition has no definition()/schedule() hooks; move the body of definition() "
        "into `with FusionDefinition() as fd:` (self -> fd); a user schedule must be rewritten for the direct API"
    ),
    "FusionCache": (
        "nvfuser_direct has no process-wide FusionCache; delete this use (a new FusionDefinition always compiles)"
    ),
    "compute_contiguity": (
        "nvfuser_direct has compute_tensor_descriptor(sizes, strides) -> (contiguity, stride_order); "
        "pass both to define_tensor, or define the tensor with fd.from_pytorch(t)"
    ),
    "last_cuda_code": "nvfuser_direct keeps no last code; use fd.fec.get_cuda_kernel(inputs)",
    "debug_output": "nvfuser_direct does not capture debug output; run with NVFUSER_DUMP set instead",
    "profile": "use `with nvfuser_direct.PythonProfiler() as prof: fd.execute(inputs)` and prof.profile",
    "id": "nvfuser_direct's FusionDefinition has no cache id",
    "submodule": "nvfuser_direct has no such submodule; take the import and its uses out of the script",
    "unknown op": "nvfuser_direct 0.2.36 has no such op; " + NOT_IN_DIRECT,
    "operator": "no FusionDefinition is in scope to call the op on; write it as fd.ops.<op>(a, b)",
}
"""Constructs with no translation and what the message tells the user to do, keyed by kind
(``ops.<name>`` for an ``fd.ops`` function that direct lacks)."""
