"""One base error for every stage, so the CLI can turn any of them into one line and exit 2."""


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


class OutputError(FusionDiffError):
    """A result could not be written (a read-only or missing directory, a full disk, a file-size
    limit, stdout closed), or would be written over one of the command's inputs."""


def exception_line(exc: BaseException, limit: int | None = 300) -> str:
    """The first line of an exception's message, cut to ``limit`` characters (``None``: uncut):
    torch's out-of-memory message alone is several hundred characters of advice."""
    lines = str(exc).strip().splitlines()
    line = lines[0] if lines else ""
    return line if limit is None or len(line) <= limit else line[: limit - 3] + "..."
