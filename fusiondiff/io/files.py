"""Writing files: atomically (a temporary file renamed into place), never through a link, never
over an input, gzipped when the name asks for it. Captures (:mod:`fusiondiff.io.store`), reports, timelines and repro
scripts are all written through here.
"""

from __future__ import annotations

import os
import stat
import tempfile
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fusiondiff.records.errors import OutputError

GZIP_SUFFIX = ".gz"
"""A file name ending so is written gzipped."""


def atomic_write(path: Path, write: Any, *, devices: bool = True) -> None:
    """Call ``write(temporary_path)``, then rename the result onto ``path`` (never half-written).

    The one writer of every file fusiondiff writes, and it never writes through a link: a symbolic
    link at ``path`` (planted, or left by someone else) is refused, never followed, so a file it
    points to is never replaced, and the rename replaces ``path`` itself, never what a link put
    there meanwhile points to. Only a device or FIFO named by the user (``-o /dev/null``, a
    pipe, ``/dev/stdout``'s link to one) is written directly, since nothing can be renamed onto it;
    with ``devices`` false (a folder a run owns, which may be shared or planted) that is refused too.

    The file gets the mode a new file gets (0666 less the umask), also when it replaces a file with
    other permissions. Whatever interrupts the write (an error, Ctrl-C, SIGTERM turned into an
    exception by the command line) removes the temporary file; a failure of the file system (a
    read-only, missing or full directory, a file-size limit) is an :class:`OutputError` naming
    ``path`` and the reason.
    """
    path = Path(path)
    check_place(path, devices=devices)
    if devices and path.exists() and _special(path):  # a device or FIFO: no rename onto it
        try:
            write(str(path))
        except OSError as exc:
            raise OutputError(f"cannot write {path}: {_reason(exc, path)}") from None
        return
    target = Path(os.path.abspath(path))
    tmp = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(fd)
        write(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {_reason(exc, target)}") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def check_place(path: str | os.PathLike[str], *, devices: bool = True) -> None:
    """Refuse, before anything is written, a place :func:`atomic_write` will not write: a link
    (except, with ``devices``, one to a device or FIFO), a folder, a path under a file, and without
    ``devices`` a device or FIFO. Commands that write several files check every one first."""
    path = Path(path)
    problem = _unwritable(path)  # first: a path under a file is said as such, not as lstat's ENOTDIR
    if problem:
        raise OutputError(f"cannot write {path}: {problem}")
    refused = not_regular(path)
    if refused and devices and _special(path):
        refused = None
    if refused:
        raise OutputError(f"cannot write {path}: {refused}")


def _special(path: Path) -> bool:
    """Whether ``path`` (or what a link there points to) is a device or FIFO."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISBLK(mode)


def write_text(path: str | os.PathLike[str], text: str, *, devices: bool = True) -> None:
    """Write ``text`` (UTF-8) to ``path`` with :func:`atomic_write`; gzipped when the name ends in
    ``.gz`` (no time stamp in the header, so the same text gives the same bytes)."""
    write_bytes(path, text.encode("utf-8"), devices=devices)


def write_bytes(path: str | os.PathLike[str], data: bytes | bytearray, *, devices: bool = True) -> None:
    """Write ``data`` to ``path`` as :func:`write_text` writes text (for text already encoded: a
    record of a whole session is not copied into a string and back)."""
    path = Path(path)
    if path.name.endswith(GZIP_SUFFIX):
        import gzip

        data = gzip.compress(data, mtime=0)
    atomic_write(path, lambda tmp: Path(tmp).write_bytes(data), devices=devices)


def write_chunks(path: str | os.PathLike[str], chunks: Iterable[bytes], *, devices: bool = True) -> None:
    """Write ``chunks`` one after the other to ``path`` as :func:`write_bytes` writes its bytes
    (atomically, never through a link, gzipped for a ``.gz`` name): a report of a whole session
    is written as it is made, never held whole in memory."""
    path = Path(path)

    def write(tmp: str) -> None:
        # gzip.compress(data, mtime=0)'s very bytes, made as the chunks come
        packer = zlib.compressobj(9, zlib.DEFLATED, 31) if path.name.endswith(GZIP_SUFFIX) else None
        with open(tmp, "wb") as out:
            for chunk in chunks:
                out.write(packer.compress(chunk) if packer else chunk)
            if packer:
                out.write(packer.flush())

    atomic_write(path, write, devices=devices)


def not_regular(path: Path) -> str | None:
    """Why ``path``, itself and not what a link points to, is not a place for a file of ours
    (a link, FIFO, device or folder), or None (absent, or a regular file)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return exc.strerror or str(exc)
    if stat.S_ISLNK(mode):
        return "it is a symbolic link; fusiondiff writes nothing through a link there: remove it"
    if not stat.S_ISREG(mode):
        return "it is not a regular file (a FIFO, device or folder): remove it"
    return None


def read_bounded(path: str | os.PathLike[str], limit: int, *, what: str = "file", tail: bool = False) -> bytes:
    """At most ``limit`` bytes of the regular file ``path`` (its last ones with ``tail``, else an
    :class:`OSError` when it holds more). Opened without blocking and without following a link in
    its last step, then checked to be a regular file before a byte is read: a FIFO, a device
    (``/dev/zero``), a folder or a link is an :class:`OSError` naming it, never waited on nor read
    without end. The buffer is sized by what the file holds, never by ``limit``."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file (a FIFO, device or folder); not read as a {what}")
        if info.st_size > limit and not tail:
            raise OSError(f"{path} is larger than {limit} bytes: not a {what} fusiondiff reads")
        if tail and info.st_size > limit:
            os.lseek(fd, info.st_size - limit, os.SEEK_SET)
        chunks, left = [], min(info.st_size, limit) + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > min(info.st_size, limit):  # it grew while read
            if not tail:
                raise OSError(f"{path} grew while read: not a {what} fusiondiff reads")
            data = data[-limit:]
        return data
    finally:
        os.close(fd)


def check_not_input(output: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str] | None]) -> None:
    """Refuse to write ``output`` over one of ``inputs``, however either is spelled (a relative
    path, ``..``, a symbolic or hard link): an :class:`OutputError` before anything is written."""
    for source in inputs:
        if source is not None and _same_file(output, source):
            raise OutputError(
                f"{output} is the input {source}: writing it would destroy the input; choose another path"
            )


def _same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # one of them does not exist (yet)
        return os.path.realpath(a) == os.path.realpath(b)


def _unwritable(path: Path) -> str | None:
    """Why ``path`` cannot be a file, when that is known before trying: said plainly, rather than
    as what mkdir or rename would report."""
    if path.is_dir():
        return "it is a directory"
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if parent.exists() and not parent.is_dir():
        return f"{parent} is not a directory"
    return None


def _reason(exc: OSError, target: Path) -> str:
    reason = exc.strerror or str(exc)
    where = exc.filename
    if isinstance(where, str) and Path(where) in target.parents:
        reason += f" ({where})"
    return reason


def _umask() -> int:
    """The process's umask: read from /proc where Linux shows it, since setting it to read it
    would change it for a moment for every thread."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
