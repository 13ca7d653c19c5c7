"""What another process has open, found by device number, without ever hanging.

``os.stat('/proc/PID/fd/N')`` follows the magic link to the open object itself, so it reports the
real ``st_rdev`` of a block device whatever path its node has (``/dev/loop5``, a node made with
``mknod /tmp/n b 7 5``, a node in a container).  But it calls the file system's getattr, and a
getattr on a file of a dead hard-mounted NFS server (or a hung FUSE daemon, or a cluster file
system waiting for its lock manager) blocks, possibly for good.

The choice: read ``/proc/PID/fdinfo/N`` first.  procfs answers it from the open file itself
(``pos``, ``flags``, ``mnt_id``) without calling into the file's file system, so it cannot hang.
``mnt_id`` names the mount the file was opened on; its file-system type comes from mountinfo (our
own, or the other process's ``/proc/PID/mountinfo`` when it lives in another mount namespace, as
the device jail's benchmark does).  Only files on a mount whose type may hang (:data:`MAY_HANG`)
are skipped; everything else is stat'ed.  A mount id found in no table (a lazily unmounted file
system, kernel-internal mounts) falls back to the old rule: stat only links into ``/dev/``.
Kernels without ``mnt_id`` in fdinfo (before 3.15) fall back to the longest mount-point prefix of
the link's text in our own mountinfo.

Cost: one readlink per fd; for a link to a path, one small fdinfo read and one stat.

Where the facts come from: the /proc files (links, fdinfo, mountinfo) are read under a root
directory; what cannot be a file there (the stat of an open object, a path's stat, a device's
first blocks, an exclusive-open probe) goes through a :class:`System`. :data:`LIVE` asks this
machine; core/remote/node_facts.py answers the same questions from facts gathered on another node.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

#: File-system types whose getattr may wait for a server, a daemon or a cluster lock manager.
#: ocfs2, gfs2 and acfs are on the list because on a RAC node a hung cluster stack is exactly
#: the moment someone runs diagnostics.
MAY_HANG = frozenset(
    {
        "nfs",
        "nfs4",
        "cifs",
        "smb3",
        "smbfs",
        "ncpfs",
        "9p",
        "afs",
        "ceph",
        "glusterfs",
        "lustre",
        "gpfs",
        "beegfs",
        "orangefs",
        "pvfs2",
        "ocfs2",
        "gfs2",
        "acfs",
        "fuse",
        "fuseblk",
        "davfs",
    }
)


class StatLike(Protocol):
    """What the guard reads of a stat: os.stat_result has it, and so do a node's facts."""

    @property
    def st_mode(self) -> int: ...
    @property
    def st_ino(self) -> int: ...
    @property
    def st_dev(self) -> int: ...
    @property
    def st_rdev(self) -> int: ...
    @property
    def st_size(self) -> int: ...


class Reader(Protocol):
    """An opened file or device, read only."""

    def rdev(self) -> int:
        """st_rdev of what was opened (fstat): the guard compares it with its earlier stat."""
        ...

    def size_bytes(self) -> int:
        """Its size (lseek to the end: a device's size too)."""
        ...

    def pread(self, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes at ``offset``; OSError."""
        ...

    def close(self) -> None: ...

    def identity(self) -> tuple[int, int] | None:
        """(st_dev, st_ino) of what was opened (fstat), None where no descriptor tells it."""
        ...


class LiveReader:
    """A read-only file descriptor of this machine."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def rdev(self) -> int:
        return os.fstat(self.fd).st_rdev

    def size_bytes(self) -> int:
        return os.lseek(self.fd, 0, os.SEEK_END)

    def pread(self, offset: int, length: int) -> bytes:
        return os.pread(self.fd, length, offset)

    def close(self) -> None:
        os.close(self.fd)

    def identity(self) -> tuple[int, int] | None:
        st = os.fstat(self.fd)
        return (st.st_dev, st.st_ino)


class System(Protocol):
    """The questions the write guard asks of a machine beyond its /proc and /sys files."""

    #: pids never counted as holders (the guard's own process)
    own_pids: frozenset[str]

    def stat(self, path: str) -> StatLike:
        """os.stat (following links); OSError."""
        ...

    def realpath(self, path: str) -> str: ...

    def lexists(self, path: str) -> bool: ...

    def isdir(self, path: str) -> bool: ...

    def listdir(self, path: str) -> list[str]:
        """Entry names; OSError."""
        ...

    def fd_names(self, fd_dir: str) -> list[str]:
        """Entry names of /proc/PID/fd (under the root); PermissionError when not readable."""
        ...

    def open_reader(self, path: str) -> Reader:
        """``path`` opened read-only for its first blocks; OSError (with its strerror)."""
        ...

    def exclusive_open_busy(self, node: str) -> bool | None:
        """True when an O_EXCL read-only open fails with EBUSY; None when it cannot be tried."""
        ...


class LiveSystem:
    """This machine, asked directly."""

    def __init__(self) -> None:
        self.own_pids = frozenset({str(os.getpid())})

    def stat(self, path: str) -> os.stat_result:
        return os.stat(path)

    def realpath(self, path: str) -> str:
        return os.path.realpath(path)

    def lexists(self, path: str) -> bool:
        return os.path.lexists(path)

    def isdir(self, path: str) -> bool:
        return os.path.isdir(path)

    def listdir(self, path: str) -> list[str]:
        return [entry.name for entry in os.scandir(path)]

    def fd_names(self, fd_dir: str) -> list[str]:
        return [entry.name for entry in os.scandir(fd_dir)]

    def open_reader(self, path: str) -> LiveReader:
        return LiveReader(os.open(path, os.O_RDONLY | os.O_CLOEXEC))

    def exclusive_open_busy(self, node: str) -> bool | None:
        try:
            fd = os.open(node, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError as exc:
            return exc.errno == errno.EBUSY
        os.close(fd)
        return False


def live_system() -> LiveSystem:
    """This machine (a new one per judgement: ``own_pids`` is this process's pid now)."""
    return LiveSystem()


def may_hang(fs_type: str) -> bool:
    """True for a network, cluster or FUSE file system (``fuse.sshfs``, ``fuse.glusterfs``...)."""
    return fs_type in MAY_HANG or fs_type.startswith("fuse.")


def unescape(text: str) -> str:
    """Undo the octal escapes (\\040 for a space) of /proc/self/mountinfo and /proc/swaps."""
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 3 < len(text) and text[i + 1 : i + 4].isdigit():
            out.append(chr(int(text[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _read_small(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, 65536)
    except OSError:
        return None
    finally:
        os.close(fd)


class MountTable:
    """mount id -> file-system type, for every mount namespace met so far.

    Mount ids are unique system-wide while the mount exists, but the kernel reuses freed ids:
    build a new table per pass rather than keeping one for a long time.
    """

    def __init__(self, proc: Path = Path("/proc")) -> None:
        self._proc = str(proc)
        self._types: dict[int, str] = {}
        self._own_points: list[tuple[str, str]] = []  # (mount point, type), longest first
        self._namespaces_read: set[str] = set()
        own_ns = self._namespace("self")
        text = self._read(f"{self._proc}/self/mountinfo")
        for mount_id, mount_point, fs_type in self._parse(text):
            self._types[mount_id] = fs_type
            self._own_points.append((mount_point, fs_type))
        self._own_points.sort(key=lambda point: len(point[0]), reverse=True)
        if own_ns is not None:
            self._namespaces_read.add(own_ns)

    @staticmethod
    def _read(path: str) -> str:
        data = b""
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            pass
        return data.decode(errors="replace")

    @staticmethod
    def _parse(text: str) -> list[tuple[int, str, str]]:
        rows = []
        for line in text.splitlines():
            fields = line.split()
            if len(fields) < 7 or "-" not in fields[6:]:
                continue
            after = fields.index("-", 6) + 1
            if after >= len(fields) or not fields[0].isdigit():
                continue
            rows.append((int(fields[0]), unescape(fields[4]), fields[after]))
        return rows

    def _namespace(self, pid: str) -> str | None:
        try:
            return os.readlink(f"{self._proc}/{pid}/ns/mnt")
        except OSError:
            return None

    def fs_type_of_mount(self, mount_id: int, pid: str) -> str | None:
        """The type of mount ``mount_id`` as process ``pid`` sees it; None when no table has it."""
        found = self._types.get(mount_id)
        if found is not None:
            return found
        namespace = self._namespace(pid)
        if namespace is None or namespace in self._namespaces_read:
            return None
        self._namespaces_read.add(namespace)
        for other_id, _, fs_type in self._parse(self._read(f"{self._proc}/{pid}/mountinfo")):
            self._types.setdefault(other_id, fs_type)
        return self._types.get(mount_id)

    def fs_type_of_path(self, path: str) -> str | None:
        """The type of the mount holding ``path`` in our namespace, by its text alone."""
        for mount_point, fs_type in self._own_points:
            if path == mount_point or path.startswith(mount_point.rstrip("/") + "/"):
                return fs_type
        return None


@dataclass(frozen=True)
class OpenFd:
    """One open file of a process, as the kernel sees it."""

    pid: int
    fd: int
    link: str  # the magic link's text: the path the file was opened as, after symlinks
    flags: int | None  # open(2) flags from fdinfo; None where fdinfo was unreadable
    st: StatLike  # of the open object itself

    @property
    def writable(self) -> bool:
        return self.flags is not None and (self.flags & os.O_ACCMODE) in (os.O_WRONLY, os.O_RDWR)

    @property
    def devno(self) -> tuple[int, int] | None:
        """(major, minor) when this is a block device."""
        if not stat.S_ISBLK(self.st.st_mode):
            return None
        return (os.major(self.st.st_rdev), os.minor(self.st.st_rdev))


def fdinfo(proc: str, pid: str, fd: str) -> tuple[int | None, int | None]:
    """(flags, mnt_id) of one open file; None for what could not be read."""
    data = _read_small(f"{proc}/{pid}/fdinfo/{fd}")
    flags = mount_id = None
    if data:
        for line in data.split(b"\n"):
            if line.startswith(b"flags:"):
                try:
                    flags = int(line[6:].strip(), 8)
                except ValueError:
                    pass
            elif line.startswith(b"mnt_id:"):
                try:
                    mount_id = int(line[7:].strip())
                except ValueError:
                    pass
    return flags, mount_id


def stat_open_fd(
    proc: str,
    pid: str,
    fd: str,
    mounts: MountTable,
    trusted: frozenset[str] | set[str] = frozenset(),
    *,
    writable_only: bool = False,
    system: System | None = None,
) -> OpenFd | None:
    """The open file ``fd`` of ``pid``, or None: gone, a socket/pipe/anon inode, or on a file
    system that may hang (see the module docstring); with ``writable_only`` also None for a
    file not open for writing (decided before the stat).  ``trusted`` link texts are stat'ed
    whatever their file system (the caller already stat'ed that path itself)."""
    fd_path = f"{proc}/{pid}/fd/{fd}"
    try:
        link = os.readlink(fd_path)
    except OSError:
        return None
    if not link.startswith("/"):
        return None  # socket:[..], pipe:[..], anon_inode:[..]
    flags, mount_id = fdinfo(proc, pid, fd)
    if writable_only and (flags is None or (flags & os.O_ACCMODE) not in (os.O_WRONLY, os.O_RDWR)):
        return None
    if link not in trusted:
        if mount_id is not None:
            fs_type = mounts.fs_type_of_mount(mount_id, pid)
        else:
            fs_type = mounts.fs_type_of_path(link)
        if fs_type is None:
            if not link.startswith("/dev/"):
                return None
        elif may_hang(fs_type):
            return None
    try:
        st = os.stat(fd_path) if system is None else system.stat(fd_path)
    except OSError:
        return None
    return OpenFd(pid=int(pid), fd=int(fd), link=link, flags=flags, st=st)
