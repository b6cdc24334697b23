"""Reading and writing capture files: JSON for the records, safetensors for exact tensors.

Writes are atomic (a temporary file renamed into place), so an interrupted capture never leaves a
half-written file, and an existing file is only replaced by a complete one.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fusiondiff.errors import CaptureFormatError, FusionDiffError
from fusiondiff.model import Capture, capture_from_jsonable, to_jsonable

if TYPE_CHECKING:  # torch is only needed where tensors are saved or loaded
    import torch


def tensors_path_for(json_path: str | os.PathLike[str]) -> Path:
    """The safetensors file that goes with a capture's JSON file."""
    path = Path(json_path)
    return path.with_name(path.stem + ".tensors.safetensors")


def atomic_write(path: Path, write: Any) -> None:
    """Call ``write(temporary_path)``, then rename the result onto ``path`` (never half-written)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def dumps_capture(capture: Capture) -> str:
    """The JSON text of a capture (stable key order, so files diff well)."""
    return json.dumps(to_jsonable(capture), indent=1, sort_keys=False) + "\n"


def save_capture(
    capture: Capture,
    path: str | os.PathLike[str],
    tensors: dict[str, "torch.Tensor"] | None = None,
) -> Path:
    """Write ``capture`` to ``path`` (and its tensors next to it). Returns the JSON path."""
    path = Path(path)
    if tensors:
        from safetensors.torch import save_file

        tpath = tensors_path_for(path)
        atomic_write(tpath, lambda tmp: save_file(tensors, tmp))
        capture = dataclasses.replace(capture, tensors_file=tpath.name)
    text = dumps_capture(capture)
    atomic_write(path, lambda tmp: Path(tmp).write_text(text))
    return path


def load_capture(path: str | os.PathLike[str]) -> Capture:
    """Read a capture file, with a one-line error for a missing, foreign or newer file."""
    path = Path(path)
    if not path.exists():
        raise FusionDiffError(f"{path}: no such file")
    if path.is_dir():
        raise FusionDiffError(f"{path} is a directory; give the capture's .json file")
    try:
        data = json.loads(path.read_text())
    except UnicodeDecodeError:
        raise CaptureFormatError(f"{path} is not a fusiondiff capture (not text)") from None
    except json.JSONDecodeError as exc:
        raise CaptureFormatError(f"{path} is not a fusiondiff capture (not JSON: {exc.msg} at line {exc.lineno})") from None
    return capture_from_jsonable(data, origin=str(path))


def load_tensors(path: str | os.PathLike[str]) -> dict[str, "torch.Tensor"]:
    """The exact input storages saved with a capture (needs torch)."""
    from safetensors.torch import load_file

    tpath = tensors_path_for(path)
    if not tpath.exists():
        raise FusionDiffError(f"{path} has no saved tensors ({tpath.name} missing); capture with --save-inputs")
    return load_file(str(tpath))
