"""Read a file whole, but never more than a cap, and never from a device.

``Path.read_text()`` on ``/dev/zero`` (or a /proc file symlinked to it) reads until memory runs
out; on a FIFO without a writer it waits forever. Everything racperf reads whole goes through
here: a regular file, a pipe (``racperf parse fio <(...)``, stdin) or a /proc / sysfs file is
read in chunks up to ``limit_bytes``; a character or block device, a directory or a socket is
refused before anything is read. The error is a :class:`BoundedReadError` (an OSError, so an
existing ``except OSError`` reports it) whose ``str()`` is the whole message.

A system file (/proc, sysfs, a node's facts, racperf's settings and caches) is read with
:func:`read_regular_bytes_bounded` / :func:`read_regular_text_bounded`: a regular file only,
since such a file is never a pipe and a FIFO put in its place would block the reader forever
(the iostat sampler, every second).
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

#: what ``racperf parse`` reads at most: more than any saved tool output (a day of fio's
#: JSON status dumps every second, ~2 KB per job each, is ~170 MB)
DEFAULT_LIMIT_BYTES = 256 * 1024 * 1024
#: what a system file read whole may be at most: /proc/diskstats of 10,000 devices is about
#: 1.5 MB, a sysfs attribute a page; more is not such a file at all (a link to /dev/zero)
SYSTEM_FILE_LIMIT_BYTES = 16 * 1024 * 1024

_CHUNK = 1024 * 1024


class BoundedReadError(OSError):
    """A file refused by :func:`read_bytes_bounded`: too large, or not a file one can read whole.

    ``path`` is the file, ``reason`` one of ``"too large"``, ``"not a regular file"``.
    """

    def __init__(self, path: str, reason: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason
        self.message = message

    def __str__(self) -> str:
        return self.message


def _mib(n: int) -> str:
    return f"{n / (1024 * 1024):g} MiB"


def _too_large(path: str, limit_bytes: int) -> BoundedReadError:
    return BoundedReadError(path, "too large", f"{path} is larger than {_mib(limit_bytes)}; not read")


def _check_kind(path: str, mode: int, stream_of_tty: bool | None = None, *, pipes: bool = True) -> None:
    """Refuse what cannot be read whole. ``stream_of_tty``: checking an open stream (stdin),
    which may also be a socket, or a terminal when True. ``pipes``: False for a file that must
    be a regular file (a system file)."""
    if stat.S_ISREG(mode) or (pipes and stat.S_ISFIFO(mode)):
        return
    if stream_of_tty is not None and (stat.S_ISSOCK(mode) or (stream_of_tty and stat.S_ISCHR(mode))):
        return
    kind = (
        "a directory"
        if stat.S_ISDIR(mode)
        else "a character device"
        if stat.S_ISCHR(mode)
        else "a block device"
        if stat.S_ISBLK(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a FIFO"
        if stat.S_ISFIFO(mode)
        else "not a regular file"
    )
    expected = "a regular file or pipe" if pipes else "a regular file"
    raise BoundedReadError(path, "not a regular file", f"{path} is {kind}, not {expected}; not read")


def read_fd_bounded(fd: int, limit_bytes: int, name: str) -> bytes:
    """Everything readable from an open descriptor, refused past ``limit_bytes``."""
    parts: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, min(_CHUNK, limit_bytes + 1 - total))
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        total += len(chunk)
        if total > limit_bytes:
            raise _too_large(name, limit_bytes)


def read_bytes_bounded(path: str | os.PathLike[str], limit_bytes: int = DEFAULT_LIMIT_BYTES) -> bytes:
    """The bytes of ``path`` (a regular file, a FIFO or a /proc file), at most ``limit_bytes``.

    Raises BoundedReadError when it is larger or is a device / directory / socket; other
    OSErrors (missing, permission) as ``open`` raises them.
    """
    return _read_path(os.fspath(path), limit_bytes, pipes=True)


def _read_path(name: str, limit_bytes: int, *, pipes: bool) -> bytes:
    # stat before open: opening some devices has side effects (a tape rewinds, a tty...), and
    # opening a FIFO that is refused would wait for a writer
    _check_kind(name, os.stat(name).st_mode, pipes=pipes)
    fd = os.open(name, os.O_RDONLY | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        _check_kind(name, info.st_mode, pipes=pipes)  # it may have been replaced since the stat
        if stat.S_ISREG(info.st_mode) and info.st_size > limit_bytes:
            raise _too_large(name, limit_bytes)
        # /proc's seq_files report size 0: the read goes on in chunks until EOF or the limit
        return read_fd_bounded(fd, limit_bytes, name)
    finally:
        os.close(fd)


def read_text_bounded(
    path: str | os.PathLike[str],
    limit_bytes: int = DEFAULT_LIMIT_BYTES,
    encoding: str = "utf-8",
    errors: str = "replace",
) -> str:
    """:func:`read_bytes_bounded`, decoded (invalid bytes replaced by default)."""
    return read_bytes_bounded(path, limit_bytes).decode(encoding, errors)


def read_regular_bytes_bounded(path: str | os.PathLike[str], limit_bytes: int = SYSTEM_FILE_LIMIT_BYTES) -> bytes:
    """The bytes of a system file (/proc, sysfs, a settings or cache file, a node's fact),
    which must be a regular file, at most ``limit_bytes``.

    Raises BoundedReadError when it is larger or is anything else (a FIFO too); other OSErrors
    (missing, permission) as ``open`` raises them.
    """
    return _read_path(os.fspath(path), limit_bytes, pipes=False)


def read_regular_text_bounded(
    path: str | os.PathLike[str],
    limit_bytes: int = SYSTEM_FILE_LIMIT_BYTES,
    encoding: str = "utf-8",
    errors: str = "replace",
) -> str:
    """:func:`read_regular_bytes_bounded`, decoded (invalid bytes replaced by default)."""
    return read_regular_bytes_bounded(path, limit_bytes).decode(encoding, errors)


def read_stream_bounded(stream: BinaryIO, limit_bytes: int = DEFAULT_LIMIT_BYTES, name: str = "stdin") -> bytes:
    """An open binary stream (stdin) read to its end, at most ``limit_bytes``. A terminal is
    read (the user types the output); any other device is refused."""
    fd = stream.fileno()
    _check_kind(name, os.fstat(fd).st_mode, stream_of_tty=os.isatty(fd))
    return read_fd_bounded(fd, limit_bytes, name)
