"""One base error for every stage, so the CLI can turn any of them into one line and exit 2."""

from __future__ import annotations

import os
import stat


class FusionDiffError(Exception):
    """Base of every error fusiondiff raises on purpose. Its message says what to do next."""


class CaptureFormatError(FusionDiffError):
    """A file is not a fusiondiff capture, is damaged, or was written by a newer schema."""


class CaptureError(FusionDiffError):
    """Live capture could not record what it was asked to (no GPU, no Thunder, no nvFusion...)."""


class ProfilerError(CaptureError):
    """The kernel-record source (CUPTI through Kineto or nvFuser) failed or saw no kernels."""


class MissingPackageError(FusionDiffError):
    """A command needs a package of the live side (torch, nvFuser) that is not installed."""


class ReplayError(FusionDiffError):
    """A repro script could not be run, translated, or recorded."""


class DiffError(FusionDiffError):
    """Two captures cannot be compared."""


class ReportError(FusionDiffError):
    """A report cannot be made: unknown format, unreadable diff record, missing optional package."""


class OutputError(FusionDiffError):
    """A result could not be written (a read-only or missing directory, a full disk, a file-size
    limit, stdout closed), or would be written over one of the command's inputs."""


def exception_line(exc: BaseException, limit: int | None = 300) -> str:
    """The first line of an exception's message, cut to ``limit`` characters (``None``: uncut):
    torch's out-of-memory message alone is several hundred characters of advice."""
    lines = str(exc).strip().splitlines()
    line = lines[0] if lines else ""
    return line if limit is None or len(line) <= limit else line[: limit - 3] + "..."


def not_a_file(path: str | os.PathLike[str], what: str = "file") -> str | None:
    """Why ``path`` cannot be read as a ``what`` (``"script"``), in words, or ``None`` when it is a
    regular file: missing, a directory, or a FIFO or device (``/dev/zero`` never ends, a FIFO
    without a writer never starts), each said as it is rather than as "no such file"."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return f"{path}: no such file"
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror or exc}"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return f"{path} is a directory; give the {what}"
    return f"{path} is not a regular file (a FIFO or device); give the {what}"
