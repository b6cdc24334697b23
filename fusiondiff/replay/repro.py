"""Write faithful repro scripts from a capture.

nvFuser's own ``fd.repro_script_for`` rebuilds inputs with ``make_tensor``: fresh contiguous
storages, random values, no options, no environment. Each of those can change the kernel nvFuser
picks (alignment decides vectorization, index ranges decide gathers, options and ``NVFUSER_*``
change scheduling) or the numbers (constants printed with 6 significant digits). The script
written here keeps all of them, and needs only torch and ``nvfuser_direct`` to run (plus
safetensors when it loads the exact inputs). Rendering is pure text: no torch here.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from fusiondiff.io.files import check_not_input, check_place
from fusiondiff.io.store import load_capture, tensors_path_for
from fusiondiff.recording import synthesis
from fusiondiff.recording.synthesis import INT_RANGES, int_range, synthesized_numel
from fusiondiff.records.environment import Environment
from fusiondiff.records.errors import FusionDiffError, ReplayError
from fusiondiff.records.escape import printable
from fusiondiff.records.limits import REPRO_INPUTS
from fusiondiff.records.model import Capture, FusionRecord, TensorMeta
from fusiondiff.replay.rebuild import Rebuilt
from fusiondiff.replay.repro_definition import direct_definition, faithful
from fusiondiff.replay.saved_inputs import usable_saved_inputs
from fusiondiff.replay.script_proof import pinned_header, write_script
from fusiondiff.replay.script_safety import (
    comment_text,
    dtype_expression,
    literal,
    literal_list,
    text_literal,
)

_MAX_STEM = 80
"""Longest file name stem of a written script, before its suffixes (names come from captures)."""
_MAX_SCALAR_TEXT = 100
"""Longest scalar value text read as a number (``repr`` of a complex double is under 60)."""


def render_repro(
    fusion: FusionRecord,
    environment: Environment,
    tensors_file: str | None = None,
    *,
    capture_name: str | None = None,
    notes: Sequence[str] = (),
    saved_keys: frozenset[str] | None = None,
) -> str:
    """The text of a runnable repro script for one recorded fusion.

    With ``tensors_file`` (a safetensors file; a relative path is taken relative to the script),
    inputs that have a ``tensor_key`` (among ``saved_keys``, the ones the file can give, when
    given: :func:`fusiondiff.replay.saved_inputs.usable_saved_inputs`) are loaded exactly; the
    others are synthesized with the recorded dtype, storage size, storage offset, strides and
    integer range. ``capture_name`` and ``notes`` only go into the header comment. Raises
    :class:`ReplayError` when the record cannot make a runnable script (a definition that does not
    parse, a scalar without a value).
    """
    if len(fusion.inputs) > REPRO_INPUTS:
        raise ReplayError(
            f"{printable(fusion.key)}: {len(fusion.inputs)} inputs, more than the {REPRO_INPUTS} a repro script is "
            "written for"
        )
    printed, function = direct_definition(fusion)
    rebuilt = faithful(printed, tuple(fusion.exact_constants))
    inputs = sorted(fusion.inputs, key=lambda m: m.index)
    if tensors_file is not None:
        inputs = [_loaded_if(m, saved_keys) for m in inputs]
    exact = tensors_file is not None and any(m.tensor_key for m in inputs if m.kind == "tensor")
    out: list[str] = []
    out += _header(fusion, environment, capture_name, exact, notes)
    out += _environment(environment.nvfuser_env)
    out += ["import torch", "from nvfuser_direct import FusionDefinition, DataType", ""]
    out += _rebuild_notes(rebuilt)
    out += [rebuilt.text.rstrip("\n"), "", "", "with FusionDefinition() as fd:", f"    {function}(fd)", ""]
    out += _helpers(inputs, tensors_file if exact else None)
    out += _inputs(fusion, inputs, exact)
    out += _execute(fusion)
    return "\n".join(out) + "\n"


def write_repros(
    capture_path: str | os.PathLike[str],
    output: str | os.PathLike[str],
    fusion: str | None = None,
    on_note: Callable[[str], None] | None = None,
    every_record: bool = False,
    progress: Callable[[str], None] | None = None,
) -> list[Path]:
    """Write repro scripts for a capture's fusions; returns the paths written.

    One script per distinct fusion (:attr:`~fusiondiff.records.model.FusionRecord.replay_key`, as the round
    trip replays them), for its first record; ``every_record``: one per record (``progress`` hears
    how many records the scripts stand for). One script (the capture's only fusion, or the one
    ``fusion`` selects, see :func:`select_fusions`): ``output`` is the script, unless it is an
    existing directory. Several: ``output`` is a directory holding one script per record or distinct
    fusion, ``<trace>_<name>.py``, made unique where records share it (see :func:`_file_names`). Exact inputs saved with the capture are loaded by
    the scripts through a path relative to them. Every script is rendered, and every path checked
    not to be the capture or its tensors, before any is written; each is written atomically and
    kept only once Python, reading the written bytes, gets the code meant
    (:func:`fusiondiff.replay.script_proof.write_script`).
    """
    capture_path = Path(capture_path)
    capture = load_capture(capture_path)
    chosen = select_fusions(capture, fusion, origin=str(capture_path))
    if not every_record and len(chosen) > 1:
        first: dict[Any, FusionRecord] = {}
        for f in chosen:
            first.setdefault(f.replay_key, f)
        distinct = tuple(first.values())
        if len(distinct) < len(chosen) and progress is not None:
            progress(
                f"{len(chosen)} records, {len(distinct)} distinct fusion(s): one script each, for its first "
                "record, as the round trip replays them (--every-record: one per record)"
            )
        chosen = distinct
    output = Path(output)
    if len(chosen) == 1 and not output.is_dir():
        targets = [(chosen[0], output)]
    else:
        if output.exists() and not output.is_dir():
            raise FusionDiffError(
                f"{output} is a file but {capture_path} has {len(chosen)} {'' if every_record else 'distinct '}fusions: "
                "give a directory, or pick one with --fusion"
            )
        if not output.exists() and output.suffix == ".py":
            # `-o x.py` names a script: a directory called x.py of several scripts is not what was asked
            raise FusionDiffError(
                f"{output} names a script but {capture_path} has {len(chosen)} {'' if every_record else 'distinct '}"
                f"fusions: give a directory (one script per {'record' if every_record else 'distinct fusion'}), "
                "or pick one with --fusion"
            )
        # Named among all the capture's records, so a record keeps its file name whichever are chosen.
        names = {id(record): name for record, name in zip(capture.fusions, _file_names(capture.fusions))}
        targets = [(record, output / names[id(record)]) for record in chosen]
    tensors, notes = _saved_tensors(capture, capture_path)
    usable = None
    if tensors is not None:
        # read before a script relies on it: a damaged file or a missing key is said, not left to the script
        usable, more = usable_saved_inputs(tensors, chosen)
        notes, tensors = (*notes, *more), (tensors if usable is not None else None)
    for _, path in targets:
        check_not_input(path, [capture_path, tensors or tensors_path_for(capture_path)])
        check_place(path)
    for note in notes:
        (on_note or (lambda message: None))(note)
    rendered = []
    for record, path in targets:
        tensors_file = _relative_to(tensors, path.parent) if tensors is not None else None
        text = render_repro(
            record, capture.environment, tensors_file, capture_name=str(capture_path), notes=notes, saved_keys=usable
        )
        rendered.append((path, text))
    for path, text in rendered:
        write_script(path, text)
    return [path for path, _ in rendered]


def select_fusions(capture: Capture, fusion: str | None = None, origin: str = "capture") -> tuple[FusionRecord, ...]:
    """The capture's fusions, or the one ``fusion`` names in the ``--fusion`` grammar of every
    command (:mod:`fusiondiff.records.fusion_spec`): ``#N`` (as ``fusiondiff show`` numbers them), a
    name, a key or the start of one. Two records can share a key (one region run with inputs of
    different alignment, or with other options): ``#N`` selects each of them."""
    from fusiondiff.records.fusion_spec import fusion_positions, several_named

    fusions = capture.fusions
    if not fusions:
        raise FusionDiffError(f"{origin} holds no fusions: nothing to write a repro for")
    if fusion is None:
        return fusions
    positions = fusion_positions(fusions, fusion, origin)
    if len(positions) > 1:
        raise FusionDiffError(several_named(fusions, fusion, positions, origin))
    return (fusions[positions[0]],)


# --------------------------------------------------------------------------------------------
# Script sections


def _rebuild_notes(rebuilt: Rebuilt) -> list[str]:
    """Comment lines saying what was changed in nvFuser's print to rebuild the same fusion."""
    lines = []
    if rebuilt.restored or rebuilt.ambiguous:
        lines.append("# Constants nvFuser printed with 6 significant digits, restored from the recorded exact values:")
        lines += [f"#   {printed} -> {value}" for printed, value in rebuilt.restored]
        lines += [
            f"#   {printed}: several recorded constants round to it, left as printed" for printed in rebuilt.ambiguous
        ]
    if rebuilt.index_literals:
        lines.append(
            f"# {rebuilt.index_literals} integer literal(s) defined as DataType.Index scalars, as in the recorded"
            " fusion (printed bare, they would rebuild as Int and add casts)."
        )
    return lines or [""]


@functools.cache
def _source(helper: Callable[..., Any]) -> list[str]:
    """The source lines of a helper copied into scripts (read from its file once)."""
    return inspect.getsource(helper).rstrip("\n").splitlines()


def _header(
    fusion: FusionRecord, env: Environment, capture_name: str | None, exact: bool, notes: Sequence[str]
) -> list[str]:
    from fusiondiff.records.version import __version__

    def known(value: object) -> str:
        return _one_line(str(value)) if value is not None else "unknown"

    trace = f"{_one_line(fusion.trace)} trace" if fusion.trace else "script"
    called = _times(fusion.call_count)
    gpu = known(env.gpu_name) + (f" (sm {_one_line(env.compute_capability)})" if env.compute_capability else "")
    lines = [
        f"# Repro of fusion {_one_line(fusion.key)} ({_one_line(fusion.name)}, {trace}, called {called}),",
        f"# written by fusiondiff {__version__} from capture {known(capture_name)}.",
        f"# Recorded at {known(env.recorded_at)} on {gpu}: driver {known(env.driver_version)},",
        f"#   CUDA {known(env.cuda_version)}, torch {known(env.torch_version)}, nvFuser {known(env.nvfuser_version)},"
        f" Thunder {known(env.thunder_version)}.",
        "# It keeps what nvFuser's repro_script_for drops: the NVFUSER_* variables, each input's storage",
        "# offset (so its pointer alignment), strides and integer value range, the enable/disable options",
        "# and the constants' full precision" + (", and loads the exact inputs." if exact else "."),
        "# Needs torch and nvfuser_direct" + (", and safetensors for the exact inputs." if exact else "."),
    ]
    lines += [f"# Note: {_one_line(note)}" for note in notes]
    # Every value above is already one line; this keeps it so whatever is added to the header. The
    # first two lines are fixed: Python reads a codec declaration there (script_proof).
    return pinned_header() + [comment_text(line) for line in lines] + [""]


def _environment(nvfuser_env: dict[str, str]) -> list[str]:
    lines = ["import os", "import sys", "from pathlib import Path", ""]
    lines.append("# nvFuser reads NVFUSER_* when it starts, so they are set before nvfuser_direct is imported.")
    recorded = {k: v for k, v in sorted(nvfuser_env.items()) if k.startswith("NVFUSER_")}
    where = "the recorded environment"
    lines += [
        f"os.environ[{literal(name, 'variable', where)}] = {text_literal(value, f'{where}: {name}')}"
        for name, value in recorded.items()
    ]
    lines += [
        f"RECORDED_NVFUSER_ENV = {literal_list(recorded, 'variable', where)}",
        "for _name in sorted(os.environ):",
        "    if _name.startswith('NVFUSER_') and _name not in RECORDED_NVFUSER_ENV:",
        "        print(f'warning: {_name} is set here but was not set in the recording', file=sys.stderr)",
        "",
    ]
    return lines


def _helpers(inputs: list[TensorMeta], tensors_file: str | None) -> list[str]:
    """The helper functions the inputs section calls, copied from
    :mod:`fusiondiff.recording.synthesis` (the replay's ``--inputs`` draws with the same ones)."""
    tensors = [m for m in inputs if m.kind == "tensor"]
    synthesized = [m for m in tensors if m.tensor_key is None or tensors_file is None]
    helpers: list[Callable[..., Any]] = []
    if synthesized:
        helpers.append(synthesis.synthesize_storage)
    if any(m.dtype in INT_RANGES for m in synthesized):
        helpers.append(synthesis.pin_range)
    if tensors_file is not None:
        helpers.append(synthesis.exact_storage)
    if any(m.device.startswith("cuda") and m.alignment_bytes for m in tensors):
        helpers += [synthesis.alignment_of, synthesis.check_alignment]
    lines: list[str] = []
    for helper in helpers:
        lines += ["", *_source(helper), ""]
    if tensors_file is not None:
        lines += [
            "",
            "from safetensors.torch import load_file",
            "",
            f"TENSORS_FILE = Path({tensors_file!r})",
            "if not TENSORS_FILE.is_absolute():",
            "    # Relative to this script, so the script and the saved inputs can move together.",
            "    TENSORS_FILE = Path(__file__).resolve().parent / TENSORS_FILE",
            "if not TENSORS_FILE.exists():",
            "    sys.exit(f'exact inputs not found: {TENSORS_FILE} (keep it where the capture saved it)')",
            "_SAVED = load_file(str(TENSORS_FILE))",
            "",
        ]
    return lines


def _inputs(fusion: FusionRecord, inputs: list[TensorMeta], exact: bool) -> list[str]:
    lines = ["", "inputs = []"]
    for meta in inputs:
        where = f"{fusion.key}: input {int(meta.index)}"
        if meta.kind == "scalar":
            value = _scalar_literal(fusion, meta)
            lines.append(f"inputs.append({value})  # input {int(meta.index)}: {comment_text(meta.dtype)}")
            continue
        dtype = dtype_expression(meta.dtype, where)
        device = literal(meta.device, "device", where)
        shape, stride = _ints(meta.shape), _ints(meta.stride)
        layout = f"{shape}, {stride}, {int(meta.storage_offset)}"
        offset = int(meta.storage_offset)
        describe = f"# input {meta.index}: {dtype} shape {shape} stride {stride}, storage offset {offset}"
        if exact and meta.tensor_key is not None:
            lines.append(describe + ", exact values")
            exact_storage = f"exact_storage(_SAVED, {literal(meta.tensor_key, 'tensor key', where)}, {dtype}, {device})"
            lines.append(f"inputs.append({exact_storage}.as_strided({layout}))")
        else:
            numel = synthesized_numel(meta)
            bounds = ""
            if dtype in INT_RANGES:
                low, high, recorded = int_range(dtype, meta.min_value, meta.max_value)
                describe += f", values {low}..{high}" + ("" if recorded else " (range not recorded)")
                bounds = f", {low}, {high}"
            lines.append(describe)
            storage = f"synthesize_storage({numel}, {dtype}, {device}{bounds})"
            lines.append(f"inputs.append({storage}.as_strided({layout}))")
            if bounds:
                # the recorded extremes themselves, so the replay records the same range
                lines.append(f"pin_range(inputs[-1], {low}, {high})")
        if meta.device.startswith("cuda") and meta.alignment_bytes:
            lines.append(f"check_alignment({meta.index}, inputs[-1], {int(meta.alignment_bytes)})")
    return lines + [""]


def _execute(fusion: FusionRecord) -> list[str]:
    device = f", device={int(fusion.device_index)}" if fusion.device_index else ""
    enable = literal_list(fusion.enable_options, "option", f"{fusion.key}: enable_options")
    disable = literal_list(fusion.disable_options, "option", f"{fusion.key}: disable_options")
    return [
        "# The per-call options the recording passed (Thunder passes them; nvFuser's repro drops them).",
        f"outputs = fd.execute(inputs{device}, _enable_options={enable}, _disable_options={disable})",
        "torch.cuda.synchronize()",
    ]


# --------------------------------------------------------------------------------------------
# Small helpers


def _scalar_literal(fusion: FusionRecord, meta: TensorMeta) -> str:
    text = meta.scalar_value
    if text is None:
        raise ReplayError(f"{fusion.key}: input {meta.index} is a scalar whose value was not recorded")
    if text.strip() in ("nan", "inf", "-inf"):
        return f"float({text.strip()!r})"
    try:
        # A number's repr is short; a long text is not parsed at all (deep nesting exhausts the parser).
        value = ast.literal_eval(text) if len(text) <= _MAX_SCALAR_TEXT else None
    except (ValueError, SyntaxError, RecursionError, MemoryError):
        value = None
    # Only number literals go into the script: the value comes from a file and becomes code.
    if type(value) not in (int, float, bool, complex):
        raise ReplayError(f"{fusion.key}: input {meta.index} has scalar value {text!r:.40}, not a number")
    return repr(value)


def _loaded_if(meta: TensorMeta, saved_keys: frozenset[str] | None) -> TensorMeta:
    """``meta`` without its tensor key where the saved file cannot give it (it is synthesized)."""
    if saved_keys is None or meta.tensor_key is None or meta.tensor_key in saved_keys:
        return meta
    return dataclasses.replace(meta, tensor_key=None)


def _ints(values: Sequence[int]) -> str:
    return repr(tuple(int(v) for v in values))


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def _one_line(text: str) -> str:
    """A header value as one comment line: a capture's text may hold line breaks and escapes."""
    return comment_text(text)


def _file_names(fusions: Sequence[FusionRecord]) -> list[str]:
    """One distinct file name per record: ``<trace>_<name>.py``, with the definition hash added
    where two records would share it (one Thunder region can run several definitions), and the
    record's position in the capture (``--fusion '#N'``) where they still would (one region run
    with an aligned and a misaligned input: same name, same definition). Names are compared
    ignoring case, as some file systems do, and kept short and to ``[A-Za-z0-9_.-]``."""

    def clean(text: str) -> str:
        return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:_MAX_STEM]

    def clashing(names: list[str]) -> Counter[str]:
        counts = Counter(n.lower() for n in names)
        return Counter({n: c for n, c in counts.items() if c > 1})

    stems = [clean(f"{f.trace or 'script'}_{f.name}") for f in fusions]
    clash = clashing(stems)
    names = [f"{s}_{clean(f.definition_hash[:12])}" if s.lower() in clash else s for s, f in zip(stems, fusions)]
    clash = clashing(names)
    names = [f"{n}_{i}" if n.lower() in clash else n for i, n in enumerate(names)]
    if clashing(names):
        # A suffixed name met another record's own name: numbering every one is unique, since the
        # part after the last "_" is the position.
        names = [f"{s}_{i}" for i, s in enumerate(stems)]
    return [f"{n}.py" for n in names]


def _saved_tensors(capture: Capture, capture_path: Path) -> tuple[Path | None, tuple[str, ...]]:
    """The capture's safetensors file if it is there, and a header note if it should be but is not."""
    if capture.tensors_file:
        name = capture.tensors_file
        # The scripts load this file, so a capture may only name one beside itself.
        if Path(name).name != name or name in (".", "..") or not name.isprintable():
            raise ReplayError(f"{capture_path}: tensors_file {name!r:.60} is not a file name beside the capture")
        path = capture_path.parent / name
    else:
        path = tensors_path_for(capture_path)
    if path.exists():
        return path, ()
    if capture.tensors_file or any(m.tensor_key for f in capture.fusions for m in f.inputs):
        return None, (f"the capture's exact inputs ({path.name}) were not found: inputs are synthesized",)
    return None, ()


def _relative_to(path: Path, directory: Path) -> str:
    try:
        return os.path.relpath(path.resolve(), directory.resolve())
    except ValueError:  # another drive on Windows: no relative path exists
        return str(path.resolve())
