"""The round trip's output folder: what it writes under ``-o DIR``, and what it trusts from there.

The round trip owns ``DIR/scripts``, ``DIR/replays``, ``DIR/logs``, ``DIR/slurm``, ``DIR/replay.json``,
``DIR/diff.json`` and ``DIR/summary.txt``. A rerun finds whatever is there, and a folder can be shared or planted, so:

- nothing there is written through a symbolic link, nor read from one: a link, a FIFO or a device
  in those places is refused before anything is written (:func:`check_folder`), and again just
  before each write (:func:`owned`), so no file outside DIR is ever changed;
- an input (a live capture, its tensors file) inside those places is refused: the round trip
  would overwrite it, or take it as its own replay;
- a replay kept from an earlier run is trusted only when it can be tied to this run's plan: a
  replay capture whose ``source`` names the script, the live fusion's key and the sha256 of the
  script text written now (:func:`plan_tie`, :func:`trusted_replay`); anything else is replayed
  again;
- a replay's own output in ``DIR/logs`` is removed before its process starts
  (:func:`clear_stale`), so a file left by an earlier run is never taken for this run's result.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fusiondiff.records.errors import FusionDiffError, ReplayError
from fusiondiff.records.escape import printable
from fusiondiff.records.model import Capture
from fusiondiff.roundtrip.plan import source_of
from fusiondiff.roundtrip.records import DistinctFusion, LiveSource

OWNED_FOLDERS = ("scripts", "replays", "logs")
OWNED_FILES = ("replay.json", "diff.json", "summary.txt")


class FolderError(FusionDiffError):
    """A place under DIR that the round trip writes is not one it may write."""


def check_folder(directory: Path, inputs: Sequence[Path]) -> None:
    """Refuse, before anything is written, a link or a file that is not regular anywhere the
    round trip writes under ``directory``, and an input (``inputs``: the live captures and their
    tensors files) inside those places. ``directory`` itself may be a link (a scratch disk)."""
    for name in OWNED_FOLDERS:
        folder = directory / name
        if folder.is_symlink():
            raise FolderError(_link_words(folder))
        if folder.is_dir():
            for entry in os.scandir(folder):
                if not entry.is_dir(follow_symlinks=False):
                    owned(Path(entry.path))
    for name in OWNED_FILES:
        owned(directory / name)
    for source in inputs:
        if not source.exists():
            continue
        for name in OWNED_FOLDERS:
            if _inside(source, directory / name):
                raise FolderError(
                    f"{printable(str(source))} is inside {printable(str(directory / name))}, which the round trip "
                    "writes: move the input out of it"
                )
        for name in OWNED_FILES:
            from fusiondiff.io.files import check_not_input

            check_not_input(directory / name, [source])


def _not_a_link(path: Path) -> os.stat_result | None:
    """``path``'s own status (``lstat``), ``None`` where it is absent; refused where it is a link or
    cannot be read."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise FolderError(f"cannot use {printable(str(path))}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(info.st_mode):
        raise FolderError(_link_words(path))
    return info


def owned(path: Path) -> Path:
    """``path``, once shown not to be a link, a FIFO or a device (absent, or a regular file)."""
    info = _not_a_link(path)
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise FolderError(
            f"{printable(str(path))} is not a regular file (a FIFO, device or folder) where the round trip writes "
            "one: remove it"
        )
    return path


def owned_folder(path: Path) -> Path:
    """``path``, once shown to be absent or a folder itself (not a link to one, nor a file)."""
    info = _not_a_link(path)
    if info is not None and not stat.S_ISDIR(info.st_mode):
        raise FolderError(f"{printable(str(path))} is not a folder where the round trip makes one: remove it")
    return path


def clear_stale(output: Path) -> None:
    """Remove what an earlier run left where a replay process is about to write (its capture and
    its log), so only what this process writes is read after it."""
    from fusiondiff.replay.runner import log_path_for

    for path in (output, log_path_for(output)):
        owned(path).unlink(missing_ok=True)


def plan_tie(stem: str, live_key: str, script_text: str) -> str:
    """The ``source`` a kept replay of ``stem`` carries: its script, the live fusion's key and the
    sha256 of the script text, so a rerun can tell it was made from the script written now."""
    digest = hashlib.sha256(script_text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"scripts/{stem}.py (repro of {live_key}, script sha256 {digest})"


def trusted_replay(path: Path, tie: str | None) -> bool:
    """A replay capture kept by a run of this plan: a regular file, readable, of kind replay,
    holding a fusion, and carrying ``tie`` (:func:`plan_tie`) as its source."""
    from fusiondiff.io.store import load_capture

    if tie is None:
        return False
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
        capture = load_capture(path)
    except (OSError, FusionDiffError):
        return False
    return capture.kind == "replay" and bool(capture.fusions) and capture.source == tie


@dataclass(frozen=True)
class PlannedScript:
    """A distinct fusion's faithful repro, rendered and not yet written."""

    path: Path
    """``DIR/scripts/<stem>.py``."""
    text: str
    tie: str
    """Its :func:`plan_tie`: the source its kept replay carries."""


def plan_scripts(
    capture: Capture,
    sources: Sequence[LiveSource],
    distinct: Sequence[DistinctFusion],
    scripts_dir: Path,
    not_replayed: dict[int, str],
) -> dict[int, PlannedScript]:
    """Each distinct fusion's faithful repro, ``DIR/scripts/<stem>.py``, rendered but not written
    (so a round trip that cannot replay writes nothing); its saved tensors are those of the rank
    that recorded it. A fusion no repro can be written for goes to ``not_replayed``."""
    from fusiondiff.io.files import check_not_input
    from fusiondiff.replay.repro import render_repro
    from fusiondiff.replay.saved_inputs import usable_saved_inputs

    inputs = [s.path for s in sources]
    tensors_of = {s.path: _saved_tensors(s.capture, s.path) for s in sources}
    planned = {}
    for d in distinct:
        source = source_of(sources, d.index)
        tensors = tensors_of[source.path]
        # what the saved file can give this fusion: a damaged file or a missing key is in the header
        saved_keys, notes = (
            usable_saved_inputs(tensors, [capture.fusions[d.index]]) if tensors is not None else (None, [])
        )
        tensors = tensors if saved_keys is not None else None
        path = owned(scripts_dir / f"{d.stem}.py")
        check_not_input(path, [*inputs, *(t for t in tensors_of.values() if t is not None)])
        tensors_file = os.path.relpath(tensors.resolve(), scripts_dir.resolve()) if tensors is not None else None
        try:
            text = render_repro(
                capture.fusions[d.index],
                source.capture.environment,
                tensors_file,
                capture_name=source.path.name,
                notes=notes,
                saved_keys=saved_keys,
            )
        except ReplayError as exc:
            not_replayed[d.index] = f"no repro could be written: {exc}"
            continue
        planned[d.index] = PlannedScript(path, text, plan_tie(d.stem, capture.fusions[d.index].key, text))
    return planned


def write_scripts(planned: dict[int, PlannedScript]) -> dict[int, Path]:
    """Write the :func:`plan_scripts` (rewritten every run, so the scripts are always this
    fusiondiff's; a script already as planned is left alone) through the read-back proof."""
    from fusiondiff.replay.script_proof import write_script

    for script in planned.values():
        if not script.path.is_file() or script.path.read_bytes() != script.text.encode("utf-8", "surrogatepass"):
            write_script(script.path, script.text)
    return {index: script.path for index, script in planned.items()}


def tensors_files(sources: Sequence[LiveSource]) -> list[Path]:
    """The saved tensors of each live capture that has them."""
    return [t for s in sources if (t := _saved_tensors(s.capture, s.path)) is not None]


def _saved_tensors(capture: Capture, live: Path) -> Path | None:
    from fusiondiff.io.store import tensors_path_for

    name = capture.tensors_file
    if name and Path(name).name == name and name not in (".", ".."):
        if (live.parent / name).exists():
            return live.parent / name
    default = tensors_path_for(live)
    return default if default.exists() else None


def _inside(path: Path, folder: Path) -> bool:
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(folder))
    except ValueError:
        return False
    return True


def _link_words(path: Path) -> str:
    try:
        target = f" (to {printable(os.readlink(path))})"
    except OSError:
        target = ""
    return (
        f"{printable(str(path))} is a symbolic link{target}: the round trip writes only regular files and "
        "folders under DIR, never through a link; remove it"
    )
