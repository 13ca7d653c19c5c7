"""Strict mounts, as systemd's ProtectSystem=strict: inside the run's private mount namespace
every mount becomes read-only and nodev, then only what the run may write is bound writable.

* :func:`make_all_read_only`: ``mount_setattr(2)`` with ``AT_RECURSIVE`` on ``/`` (Linux 5.12+:
  one call, every mount of the tree, hidden ones included); on an older kernel each mount point
  of /proc/self/mountinfo is remounted (``MS_REMOUNT|MS_BIND``) with its own nosuid, noexec and
  atime flags kept. A regular file, directory or symlink on such a mount cannot be created,
  written, truncated, renamed or removed (EROFS), and no device node on it can be opened
  (``nodev``: EACCES), wherever it was made (a node made with mknod outside /dev included).
* :func:`bind_writable`: each writable path is bound onto itself and that one bind remounted
  read-write (still nodev and nosuid): the cleared write target files, the run's directory.
* :func:`bind_device`: a cleared device node outside /dev is bound onto itself without nodev
  (read-only: a device node is opened for writing on a read-only mount; only nodev stops it).

These change only the calling process's mount namespace (it must have unshared one, with every
mount private, so nothing propagates back to the host).
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass

CLONE_NEWNS = 0x00020000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_NOATIME = 0x400
MS_NODIRATIME = 0x800
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MS_RELATIME = 0x200000
MS_STRICTATIME = 1 << 24

_SYS_MOUNT_SETATTR = 442  # the unified syscall table: the same number on every architecture
_AT_FDCWD = -100
_AT_RECURSIVE = 0x8000
_MOUNT_ATTR_RDONLY = 0x1
_MOUNT_ATTR_NODEV = 0x4

#: mountinfo's per-mount options kept when a mount is remounted one by one
_KEPT_OPTIONS = {
    "nosuid": MS_NOSUID,
    "noexec": MS_NOEXEC,
    "noatime": MS_NOATIME,
    "nodiratime": MS_NODIRATIME,
    "relatime": MS_RELATIME,
    "strictatime": MS_STRICTATIME,
}

_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_LIBC.unshare.argtypes = [ctypes.c_int]
_LIBC.syscall.restype = ctypes.c_long


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


@dataclass(frozen=True)
class MountPoint:
    """One line of /proc/self/mountinfo: where, and its per-mount flags worth keeping."""

    path: str
    kept_flags: int


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes (\\040)."""
    out = bytearray()
    raw = field.encode("utf-8", "surrogateescape")
    index = 0
    while index < len(raw):
        digits = raw[index + 1 : index + 4]
        if raw[index] == 0x5C and len(digits) == 3 and digits.isdigit():
            out.append(int(digits, 8))
            index += 4
        else:
            out.append(raw[index])
            index += 1
    return out.decode("utf-8", "surrogateescape")


def mount_points(text: str) -> list[MountPoint]:
    """The mounts of a mountinfo text, in its order (parents before children)."""
    points = []
    for line in text.splitlines():
        fields = line.split(" ")
        if len(fields) < 6:
            continue
        flags = 0
        for option in fields[5].split(","):
            flags |= _KEPT_OPTIONS.get(option, 0)
        points.append(MountPoint(_unescape(fields[4]), flags))
    return points


def _mount(source: str | None, target: str, flags: int) -> None:
    if _LIBC.mount(source.encode() if source else None, target.encode(), None, flags, None) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"mount {target}: {os.strerror(code)}")


def enter_private_namespace() -> None:
    """This process in a mount namespace of its own whose mounts propagate nothing back to the
    host (``unshare(CLONE_NEWNS)``, then every mount private): Python 3.11 has no os.unshare."""
    if _LIBC.unshare(CLONE_NEWNS) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"unshare(CLONE_NEWNS): {os.strerror(code)}")
    _mount(None, "/", MS_REC | MS_PRIVATE)


def _mount_setattr_recursive(path: str) -> int:
    """0, or the errno of mount_setattr (ENOSYS: the kernel predates it)."""
    attr = _MountAttr(_MOUNT_ATTR_RDONLY | _MOUNT_ATTR_NODEV, 0, 0, 0)
    result = _LIBC.syscall(
        _SYS_MOUNT_SETATTR,
        ctypes.c_int(_AT_FDCWD),
        path.encode(),
        ctypes.c_uint(_AT_RECURSIVE),
        ctypes.byref(attr),
        ctypes.c_size_t(ctypes.sizeof(attr)),
    )
    return 0 if result == 0 else ctypes.get_errno()


def make_all_read_only(*, use_mount_setattr: bool = True) -> str:
    """Every mount of this namespace read-only and nodev; returns how ("mount_setattr" or
    "remount"). OSError naming the mount that could not be changed: nothing may run then."""
    if use_mount_setattr:
        code = _mount_setattr_recursive("/")
        if code == 0:
            return "mount_setattr"
        if code not in (38, 22):  # ENOSYS, EINVAL (an older kernel's answer): remount instead
            raise OSError(code, f"mount_setattr /: {os.strerror(code)}")
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as file:
        points = mount_points(file.read())
    for point in points:
        try:
            _mount(None, point.path, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NODEV | point.kept_flags)
        except OSError as exc:
            if exc.errno == 2:  # ENOENT: a mount point hidden under a later mount; that one is remounted
                continue
            raise
    return "remount"


def bind_writable(path: str, source: str | None = None) -> None:
    """``path`` (a file or directory that exists) writable again: ``source`` (default: the
    path itself; ``/proc/self/fd/N``: exactly the file of a descriptor) bound onto it, that
    bind read-write, nodev and nosuid."""
    _mount(source or path, path, MS_BIND)
    _mount(None, path, MS_REMOUNT | MS_BIND | MS_NODEV | MS_NOSUID)


def bind_device(path: str) -> None:
    """A device node outside /dev usable again: bound onto itself read-only, without nodev."""
    _mount(path, path, MS_BIND)
    _mount(None, path, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID)
