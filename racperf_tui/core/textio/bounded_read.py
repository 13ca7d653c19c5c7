"""Read a file whole, but never more than a cap, never from a device, and never for ever.

``Path.read_text()`` on ``/dev/zero`` (or a /proc file symlinked to it) reads until memory runs
out; on a FIFO without a writer it waits forever; /proc/kmsg blocks and takes the kernel log's
lines from whoever else reads them. Everything racperf reads whole goes through here: a
regular file or a pipe (``racperf parse fio <(...)``, stdin) is read in chunks up to
``limit_bytes``; a character or block device, a directory, a socket, and a file of a kernel
file system (proc, sysfs, debugfs...: found by its device number in mountinfo, wherever it is
mounted and whatever link leads to it) are refused before anything is read. A FIFO is opened
without waiting for a writer: one that no process writes to within ``writer_wait_s``, or that
stays silent for ``idle_timeout_s``, is given up on. The error is a :class:`BoundedReadError`
(an OSError, so an existing ``except OSError`` reports it) whose ``str()`` is the whole message.

A system file (/proc, sysfs, a node's facts, racperf's settings and caches) is read with
:func:`read_regular_bytes_bounded` / :func:`read_regular_text_bounded`: a regular file only (a
FIFO put in its place would block the reader: the iostat sampler, every second), wherever it
is, kernel file systems included, at most 16 MiB.
"""

from __future__ import annotations

import os
import select
import stat
import time
from typing import BinaryIO

#: what ``racperf parse`` reads at most: more than any saved tool output (a day of fio's
#: JSON status dumps every second, ~2 KB per job each, is ~170 MB)
DEFAULT_LIMIT_BYTES = 256 * 1024 * 1024
#: what a system file read whole may be at most: /proc/diskstats of 10,000 devices is about
#: 1.5 MB, a sysfs attribute a page; more is not such a file at all (a link to /dev/zero)
SYSTEM_FILE_LIMIT_BYTES = 16 * 1024 * 1024

_CHUNK = 1024 * 1024
#: how long a FIFO may have no writer before the read gives up
WRITER_WAIT_S = 2.0
#: how long a pipe may stay silent (a writer that neither writes nor closes) before the read gives up
IDLE_TIMEOUT_S = 30.0
#: file systems whose files are the kernel's, never saved output
KERNEL_FS_TYPES = frozenset(
    {
        "proc",
        "sysfs",
        "debugfs",
        "tracefs",
        "securityfs",
        "cgroup",
        "cgroup2",
        "configfs",
        "bpf",
        "pstore",
        "efivarfs",
        "fusectl",
        "devpts",
        "mqueue",
        "binfmt_misc",
    }
)
_MOUNTINFO = "/proc/self/mountinfo"


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


def kernel_file_system(st_dev: int, mountinfo: str = _MOUNTINFO) -> tuple[str, str] | None:
    """(file system type, mount point) when ``st_dev`` is a kernel file system's; None else."""
    wanted = f"{os.major(st_dev)}:{os.minor(st_dev)}"
    try:
        with open(mountinfo, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    for line in lines:
        fields, _, after = line.partition(" - ")
        parts = fields.split()
        fs_type = after.split(" ", 1)[0]
        if len(parts) >= 5 and parts[2] == wanted and fs_type in KERNEL_FS_TYPES:
            return fs_type, parts[4].replace("\\040", " ")
    return None


def refuse_kernel_file(path: str, st: os.stat_result | None = None) -> os.stat_result:
    """BoundedReadError when ``path`` (``st``: its stat, else stat'ed here) is a kernel file
    system's file; its stat otherwise."""
    st = os.stat(path) if st is None else st
    found = kernel_file_system(st.st_dev)
    if found is not None:
        fs_type, mount_point = found
        raise BoundedReadError(
            path,
            "kernel file",
            f"{path} is a file of the kernel's {fs_type} file system (mounted on {mount_point}), not saved "
            "output; not read (some block a read for ever or take what they hand out from other readers)",
        )
    return st


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


def _wait_readable(fd: int, name: str, idle_timeout_s: float) -> None:
    ready, _, _ = select.select([fd], [], [], idle_timeout_s)
    if not ready:
        raise BoundedReadError(
            name, "silent", f"{name}: nothing written to it for {idle_timeout_s:g} s; gave up reading"
        )


def read_fifo_bounded(
    fd: int, limit_bytes: int, name: str, writer_wait_s: float = WRITER_WAIT_S, idle_timeout_s: float = IDLE_TIMEOUT_S
) -> bytes:
    """A FIFO opened O_NONBLOCK read to its end: refused when no process writes to it within
    ``writer_wait_s`` (a read returns end-of-file while there is no writer; 0: an empty pipe
    is empty input) or when it stays silent for ``idle_timeout_s``."""
    parts: list[bytes] = []
    total = 0
    started = time.monotonic()
    # a read of an O_NONBLOCK FIFO says which: EAGAIN while a writer has it open, end of file
    # while none has (poll would not tell: it stays silent until a writer has come and gone)
    while True:
        if os.get_blocking(fd):  # stdin: never read before it has something
            _wait_readable(fd, name, idle_timeout_s)
        try:
            chunk = os.read(fd, min(_CHUNK, limit_bytes + 1 - total))
        except BlockingIOError:
            _wait_readable(fd, name, idle_timeout_s)
            continue
        if chunk:
            parts.append(chunk)
            total += len(chunk)
            if total > limit_bytes:
                raise _too_large(name, limit_bytes)
            continue
        if parts or writer_wait_s <= 0:
            return b"".join(parts)
        # end of file before any byte: no writer (yet); a writer may still open it
        if time.monotonic() - started >= writer_wait_s:
            raise BoundedReadError(
                name, "no writer", f"{name} is a FIFO no process wrote to within {writer_wait_s:g} s; not read"
            )
        time.sleep(0.05)


def read_bytes_bounded(
    path: str | os.PathLike[str],
    limit_bytes: int = DEFAULT_LIMIT_BYTES,
    idle_timeout_s: float = IDLE_TIMEOUT_S,
) -> bytes:
    """The bytes of ``path`` (a regular file or a FIFO), at most ``limit_bytes``.

    Raises BoundedReadError when it is larger, is a device / directory / socket / a kernel
    file system's file, or is a FIFO without a writer or silent for ``idle_timeout_s``; other
    OSErrors (missing, permission) as ``open`` raises them.
    """
    name = os.fspath(path)
    # stat before open: opening some devices has side effects (a tape rewinds, a tty...)
    before = os.stat(name)
    _check_kind(name, before.st_mode)
    refuse_kernel_file(name, before)
    fd = os.open(name, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        _check_kind(name, info.st_mode)  # it may have been replaced since the stat
        refuse_kernel_file(name, info)
        if stat.S_ISFIFO(info.st_mode):
            return read_fifo_bounded(fd, limit_bytes, name, idle_timeout_s=idle_timeout_s)
        if info.st_size > limit_bytes:
            raise _too_large(name, limit_bytes)
        os.set_blocking(fd, True)
        return read_fd_bounded(fd, limit_bytes, name)
    finally:
        os.close(fd)


def read_text_bounded(
    path: str | os.PathLike[str],
    limit_bytes: int = DEFAULT_LIMIT_BYTES,
    encoding: str = "utf-8",
    errors: str = "replace",
    idle_timeout_s: float = IDLE_TIMEOUT_S,
) -> str:
    """:func:`read_bytes_bounded`, decoded (invalid bytes replaced by default)."""
    return read_bytes_bounded(path, limit_bytes, idle_timeout_s).decode(encoding, errors)


def read_regular_bytes_bounded(path: str | os.PathLike[str], limit_bytes: int = SYSTEM_FILE_LIMIT_BYTES) -> bytes:
    """The bytes of a system file (/proc, sysfs, a settings or cache file, a node's fact),
    which must be a regular file, at most ``limit_bytes``.

    Raises BoundedReadError when it is larger or is anything else (a FIFO too); other OSErrors
    (missing, permission) as ``open`` raises them.
    """
    name = os.fspath(path)
    # stat before open: opening a device has side effects, opening a FIFO waits for a writer
    _check_kind(name, os.stat(name).st_mode, pipes=False)
    fd = os.open(name, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        _check_kind(name, info.st_mode, pipes=False)  # it may have been replaced since the stat
        if info.st_size > limit_bytes:
            raise _too_large(name, limit_bytes)
        os.set_blocking(fd, True)
        # /proc's seq_files report size 0: the read goes on in chunks until EOF or the limit
        return read_fd_bounded(fd, limit_bytes, name)
    finally:
        os.close(fd)


def read_regular_text_bounded(
    path: str | os.PathLike[str],
    limit_bytes: int = SYSTEM_FILE_LIMIT_BYTES,
    encoding: str = "utf-8",
    errors: str = "replace",
) -> str:
    """:func:`read_regular_bytes_bounded`, decoded (invalid bytes replaced by default)."""
    return read_regular_bytes_bounded(path, limit_bytes).decode(encoding, errors)


def read_stream_bounded(
    stream: BinaryIO,
    limit_bytes: int = DEFAULT_LIMIT_BYTES,
    name: str = "stdin",
    idle_timeout_s: float = IDLE_TIMEOUT_S,
) -> bytes:
    """An open binary stream (stdin) read to its end, at most ``limit_bytes``. A terminal is
    read (the user types the output); any other device is refused; a pipe or socket silent
    for ``idle_timeout_s`` is given up on."""
    fd = stream.fileno()
    info = os.fstat(fd)
    tty = os.isatty(fd)
    _check_kind(name, info.st_mode, stream_of_tty=tty)
    if tty or stat.S_ISREG(info.st_mode):
        return read_fd_bounded(fd, limit_bytes, name)
    return read_fifo_bounded(fd, limit_bytes, name, writer_wait_s=0, idle_timeout_s=idle_timeout_s)
