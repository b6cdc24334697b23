"""Everything fusiondiff asks of nvFuser, in one place, so version differences stay here.

nvFuser 0.2.36 ships only the direct bindings (``nvfuser_direct``); older wheels also shipped the
legacy ``nvfuser`` frontend. Optional APIs are found with ``getattr`` and their absence is recorded
as a warning, never a crash.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

from fusiondiff.records.errors import CaptureError, exception_line
from fusiondiff.records.kernel_names import normalize_kernel_names, parse_kernel_name
from fusiondiff.records.model import (
    FailureKind,
    FusionFailure,
    Segment,
    Segmentation,
)

_GROUP = re.compile(r"^g\{\((?P<scheduler>[A-Za-z_]+)\)\s*\n\s*group id:\s*(?P<id>\d+)", re.MULTILINE)
_GLOBAL = re.compile(r"__global__\s+void\s+(?P<name>\w+)\s*\(")


def frontend() -> Any:
    """The nvFuser Python module that defines ``FusionDefinition``."""
    try:
        import nvfuser_direct
    except ImportError as exc:
        raise CaptureError(
            f"nvFuser is not importable ({exc}); install the nvFuser wheel for your CUDA and torch"
        ) from None
    return nvfuser_direct


def definition_text(fd: Any) -> str:
    """The definition as nvFuser prints it: regenerated from the fusion IR, so a live definition
    and a script's definition of the same fusion print the same text."""
    return str(fd)


UNPRINTABLE = "# nvFuser could not print this definition: "
"""How the definition text of a fusion nvFuser cannot print starts (the note stands in for it)."""


def definition_text_or_note(fd: Any) -> str:
    """:func:`definition_text`, or a one-line note when nvFuser's printer fails on the fusion (it
    refuses an allocation domain that no stride order expresses): the fusion still runs and is
    recorded and timed, only its text is missing."""
    try:
        return definition_text(fd)
    except Exception as exc:  # noqa: BLE001 - nvFuser's printer raises RuntimeError with a C++ stack
        return f"{UNPRINTABLE}{type(exc).__name__}: {exception_line(exc)}\n"


_IR_CONSTANT = re.compile(
    r"\b(?:double|float|__half|__bfloat|__e4m3|__e5m2|__e8m0)\((?P<value>[-+]?(?:inf|nan|[0-9.]+(?:e[-+]?[0-9]+)?))\)"
)


def ir_constants(fd: Any) -> tuple[tuple[str, ...], str | None]:
    """The floating-point constants of the fusion as nvFuser holds them, and a warning when they
    cannot be read.

    ``print(fd)`` writes doubles with 6 significant digits, but the fusion IR's own printer
    (``Fusion.print_math``) writes each constant with ``max_digits10`` digits
    (``double(1.4142135623730951)``), which round-trips exactly. Read on both sides of a diff, from
    the same IR, so two runs of the same fusion record the same set. Returned as sorted ``repr``
    strings of the distinct values.
    """
    fusion = getattr(fd, "fusion", None)
    printer = getattr(fusion, "print_math", None)
    if printer is None:
        return (), "this nvFuser has no Fusion.print_math: exact constants not recorded"
    try:
        text = printer()
    except Exception as exc:  # noqa: BLE001 - evidence only
        return (), f"exact constants not recorded: print_math failed ({type(exc).__name__})"
    values = {float(m["value"]) for m in _IR_CONSTANT.finditer(text)}
    finite = sorted(v for v in values if v == v)
    return tuple(repr(v) for v in finite) + (("nan",) if len(finite) < len(values) else ()), None


def parse_segmentation(scheduled_ir: str | None, kernel_names: Sequence[str]) -> Segmentation:
    """Segments from a segmented runtime's scheduled IR (``g{(scheduler) group id: N``), or, for an
    unsegmented fusion, the one segment named by its kernel."""
    groups = [(int(m["id"]), m["scheduler"]) for m in _GROUP.finditer(scheduled_ir or "")]
    if groups:
        return Segmentation(segments=tuple(Segment(group_id=g, scheduler=s) for g, s in sorted(groups)))
    segments = {}
    for name in kernel_names:
        _, scheduler, group = parse_kernel_name(name)
        if scheduler is not None and group is not None:
            segments[group] = scheduler
    return Segmentation(
        segments=tuple(Segment(group_id=g, scheduler=s) for g, s in sorted(segments.items())), source="kernel_names"
    )


def scheduled_ir(fd: Any) -> str | None:
    """Scheduled IR of the fusion's most recent execution, or None if unavailable."""
    fec = getattr(fd, "fec", None)
    getter = getattr(fec, "get_most_recent_scheduled_ir", None)
    if getter is None:
        return None
    try:
        return getter()
    except Exception:  # noqa: BLE001 - evidence only
        return None


def split_cuda_sources(code: str) -> dict[str, str]:
    """Map each ``__global__`` kernel's name to its source (a segmented fusion has several)."""
    matches = list(_GLOBAL.finditer(code))
    if not matches:
        return {}
    out = {}
    for i, m in enumerate(matches):
        # each kernel's text runs from its signature to the next kernel's signature
        start = m.start()
        end = matches[i + 1].start() if i + 1 < len(matches) else len(code)
        out[m["name"]] = code[start:end]
    return out


def cuda_sources(fd: Any, inputs: Sequence[Any], device: int | None = None) -> tuple[dict[str, str], str | None]:
    """Generated CUDA source per kernel name, and a warning when nvFuser cannot give it."""
    getter = getattr(getattr(fd, "fec", None), "get_cuda_kernel", None)
    if getter is None:
        return {}, "this nvFuser has no fec.get_cuda_kernel: CUDA source not recorded"
    try:
        code = getter(list(inputs), False, device or 0)
    except Exception as exc:  # noqa: BLE001 - segmented fusions may refuse
        return (
            {},
            f"CUDA source not recorded: {type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}",
        )
    return split_cuda_sources(code), None


_TENSOR_NAME = re.compile(r"\bT\d+\b")
_LOCAL_NAME = re.compile(r"\b[ibdf]\d+\b")


def canonical_source(code: str) -> str:
    """CUDA source with what depends on the process's history taken out: the kernel name's
    f/c/r counters, tensor names from IR numbering (``T21``) and codegen's numbered locals
    (``i12``, ``b4``, ``d5``), renamed in order of appearance."""
    code = normalize_kernel_names(code)
    tensors: dict[str, str] = {}
    code = _TENSOR_NAME.sub(lambda m: tensors.setdefault(m[0], f"T{len(tensors)}"), code)
    locals_: dict[str, str] = {}
    return _LOCAL_NAME.sub(lambda m: locals_.setdefault(m[0], f"{m[0][0]}{len(locals_)}"), code)


def source_hashes(sources: dict[str, str]) -> dict[str, str]:
    """sha256 of each kernel's canonical source: equal for the same kernel compiled in two processes."""
    return {name: hashlib.sha256(canonical_source(text).encode()).hexdigest() for name, text in sources.items()}


def repro_script(fd: Any, inputs: Sequence[Any]) -> tuple[str | None, str | None]:
    """nvFuser's own repro script for these inputs, and a warning when it fails (it raises
    NameError for Python-scalar inputs in 0.2.36)."""
    writer = getattr(fd, "repro_script_for", None)
    if writer is None:
        return None, "this nvFuser has no repro_script_for"
    try:
        return writer(list(inputs)), None
    except Exception as exc:  # noqa: BLE001
        return None, f"nvFuser's repro_script_for failed: {type(exc).__name__}: {exc}"


_ILLEGAL_ADDRESS = ("illegal memory access", "ILLEGAL_ADDRESS", "misaligned address", "MISALIGNED_ADDRESS")
_COMPILE = ("nvrtc", "NVRTC", "compil")


def classify_failure(exc: BaseException, log_file: str | None = None) -> FusionFailure:
    """What kind of failure an execution raised, with the first line of its message.

    nvFuser's errors carry a C++ stack after the first line; that goes to the log, not the record.
    """
    text = str(exc)
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    message = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    if len(message) > 240:
        message = message[:237] + "..."
    kind: FailureKind
    if type(exc).__name__ == "ReplayTimeout":
        kind = "timeout"
    elif any(marker in text for marker in _ILLEGAL_ADDRESS):
        kind = "illegal_address"
    elif any(marker in text for marker in _COMPILE):
        kind = "compile_error"
    else:
        kind = "exception"
    return FusionFailure(kind=kind, message=message, log_file=log_file)
