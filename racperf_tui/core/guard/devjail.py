"""The kernel net: run a benchmark where /dev holds only the devices it was cleared for.

    python -m racperf_tui.core.guard.devjail --allow /dev/mapper/test1 [--allow PATH]... -- fio ARGS...

The jail unshares a private mount namespace (``unshare(CLONE_NEWNS)``; Python 3.11 has no
``os.unshare``, so libc through ctypes), makes every mount private so nothing propagates back
to the host, detaches the host's /dev from this namespace and mounts a fresh tmpfs on /dev
holding only:

* ``null``, ``zero``, ``full``, ``random``, ``urandom`` (copied from the host's nodes);
* each ``--allow``ed device, as a real node with the same major:minor, mode and owner, at the
  very path it was given (``/dev/mapper/test1``, ``/dev/disk/by-id/x``; parent directories are
  created).  A symlink is resolved to its device number and made a node at the given path; a
  path outside /dev that leads into /dev (``~/mydisk -> /dev/loop5``) gets the node it leads
  to.  Other paths outside /dev are left alone: the jail does not touch them;
* ``shm`` (a fresh tmpfs), ``fd -> /proc/self/fd``, ``stdin``, ``stdout``, ``stderr``.

Then /dev is remounted read-only, so a mistyped name can be neither opened (ENOENT) nor
created as a regular file in memory (EROFS), and the jail ``execvp``s the command: the pid the
supervisor started and tracks is the benchmark itself, signals reach it directly, and
/proc-based process-tree tracking keeps working.

When the jail cannot be built (not root, ``unshare`` refused, a kernel without mount
namespaces, an allowed path that is missing or not a device) nothing is executed: it exits
with :data:`EXIT_UNAVAILABLE` and says why on stderr.  :func:`devjail_available` answers the
same question beforehand so a run's record can say whether the net was active.
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import os
import stat
import sys
from dataclasses import dataclass

from racperf_tui.core.guard.isolated_python import isolated_module_argv, module_of_argv

#: exit status when the jail could not be set up; the command was not executed
EXIT_UNAVAILABLE = 125
#: the module a jailed command is started through
JAIL_MODULE = "racperf_tui.core.guard.devjail"
#: the command was found but could not be executed / was not found (as env(1) and the shell)
EXIT_CANNOT_EXECUTE = 126
EXIT_NOT_FOUND = 127

CLONE_NEWNS = 0x00020000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MNT_DETACH = 0x2

#: the character devices every program expects, with their fixed numbers (used when the host
#: lacks a node)
BASIC_NODES = {"null": (1, 3), "zero": (1, 5), "full": (1, 7), "random": (1, 8), "urandom": (1, 9)}

_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.unshare.argtypes = [ctypes.c_int]
_LIBC.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_LIBC.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]


class JailError(Exception):
    """The jail cannot be built; the message says why."""


@dataclass(frozen=True)
class JailNode:
    """A device node to create inside the jail's /dev."""

    path: str  # absolute, under /dev
    mode: int  # st_mode: type and permission bits
    rdev: int
    uid: int
    gid: int


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _under_dev(path: str) -> bool:
    return path == "/dev" or path.startswith("/dev/")


def _node_path(given: str) -> str | None:
    """Where in the jail's /dev the allowed ``given`` must exist so that opening ``given``
    reaches it, or None when it never goes through /dev."""
    path = os.path.normpath(os.path.abspath(given))
    for _ in range(40):  # the kernel's own limit of links followed
        if _under_dev(path):
            return path
        if not os.path.islink(path):
            break
        path = os.path.normpath(os.path.join(os.path.dirname(path), os.readlink(path)))
    real = os.path.realpath(given)
    return real if _under_dev(real) else None


def plan_nodes(allowed: list[str]) -> list[JailNode]:
    """The nodes the jail creates for ``allowed``; JailError for a path into /dev that is
    missing or is not a device node."""
    nodes: dict[str, JailNode] = {}
    for given in allowed:
        where = _node_path(given)
        if where is None:
            continue  # outside /dev: visible in the jail as it is
        if where in {f"/dev/{name}" for name in BASIC_NODES}:
            continue  # every jail has it already
        try:
            st = os.stat(given)
        except OSError as exc:
            raise JailError(f"--allow {given}: {exc.strerror}") from None
        if not (stat.S_ISBLK(st.st_mode) or stat.S_ISCHR(st.st_mode)):
            raise JailError(
                f"--allow {given}: not a device node (the jail's /dev holds only device "
                "nodes; its /dev/shm is a fresh, empty tmpfs)"
            )
        nodes[where] = JailNode(where, st.st_mode, st.st_rdev, st.st_uid, st.st_gid)
    return list(nodes.values())


def _basic_nodes() -> list[JailNode]:
    nodes = []
    for name, (major, minor) in BASIC_NODES.items():
        try:
            st = os.stat(f"/dev/{name}")
            if stat.S_ISCHR(st.st_mode):
                nodes.append(JailNode(f"/dev/{name}", st.st_mode, st.st_rdev, st.st_uid, st.st_gid))
                continue
        except OSError:
            pass
        nodes.append(JailNode(f"/dev/{name}", stat.S_IFCHR | 0o666, os.makedev(major, minor), 0, 0))
    return nodes


def devjail_available() -> tuple[bool, str]:
    """(True, "") when a jail can be built here, else (False, why).  Changes nothing: the
    namespace probe runs in a throwaway child."""
    if not sys.platform.startswith("linux"):
        return False, "the device jail needs Linux mount namespaces"
    if os.geteuid() != 0:
        return False, "the device jail needs root (mounting a private /dev takes CAP_SYS_ADMIN)"
    if not os.path.exists("/proc/self/ns/mnt"):
        return False, "this kernel has no mount namespaces"
    child = os.fork()
    if child == 0:
        code = 1
        try:
            code = 0 if _LIBC.unshare(CLONE_NEWNS) == 0 else (ctypes.get_errno() or 1)
        finally:
            os._exit(code)
    _, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        reason = os.strerror(code) if 0 < code < 256 else f"status {code}"
        return False, f"unshare(CLONE_NEWNS) is refused here: {reason}"
    return True, ""


def jail_argv(argv: list[str], allowed: list[str]) -> list[str]:
    """``argv`` run inside a device jail that allows ``allowed`` (an isolated python: its
    working directory and PYTHON* variables reach nothing it imports)."""
    options = [word for path in allowed for word in ("--allow", path)]
    return isolated_module_argv(JAIL_MODULE, *options, "--", *argv)


def unjail_argv(argv: list[str]) -> tuple[list[str], list[str]] | None:
    """(the command, the allowed paths) of an argv made by :func:`jail_argv`; None for another."""
    found = module_of_argv(argv)
    if found is None or found[0] != JAIL_MODULE or "--" not in found[1]:
        return None
    rest = found[1]
    split = rest.index("--")
    options, command = rest[:split], rest[split + 1 :]
    if len(options) % 2 or any(word != "--allow" for word in options[::2]):
        return None
    return command, options[1::2]


def _mount(source: str | None, target: str, fs_type: str | None, flags: int, data: str | None) -> None:
    _check(
        _LIBC.mount(
            source.encode() if source else None,
            target.encode(),
            fs_type.encode() if fs_type else None,
            flags,
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def build_jail(nodes: list[JailNode]) -> None:
    """Turn this process's view of /dev into the jail (see the module docstring).  Only after
    ``unshare`` succeeded does anything change, and only in the new namespace."""
    _check(_LIBC.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _mount(None, "/", None, MS_REC | MS_PRIVATE, None)
    # Detach rather than only cover the host's /dev: nothing of it stays in this namespace, not
    # even under the tmpfs.
    if _LIBC.umount2(b"/dev", MNT_DETACH) != 0 and ctypes.get_errno() != errno.EINVAL:
        _check(-1, "umount /dev")
    _mount("racperf-devjail", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755")
    for node in nodes:
        os.makedirs(os.path.dirname(node.path), mode=0o755, exist_ok=True)
        os.mknod(node.path, stat.S_IFMT(node.mode) | 0o600, node.rdev)
        os.chown(node.path, node.uid, node.gid)
        os.chmod(node.path, stat.S_IMODE(node.mode))
    os.symlink("/proc/self/fd", "/dev/fd")
    for number, name in enumerate(("stdin", "stdout", "stderr")):
        os.symlink(f"/proc/self/fd/{number}", f"/dev/{name}")
    os.mkdir("/dev/shm")
    _mount("racperf-devjail-shm", "/dev/shm", "tmpfs", MS_NOSUID, "mode=1777")
    _mount(None, "/dev", None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC, None)


def main(argv: list[str] | None = None) -> int:
    """Entry point: build the jail and exec the command; returns only on failure."""
    parser = argparse.ArgumentParser(
        prog="python -m racperf_tui.core.guard.devjail",
        description="Run a command with a private /dev that holds only the allowed devices.",
    )
    parser.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="PATH",
        help="a device the command may open, at this path (repeatable)",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD ARGS...")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given (put it after --)")
    try:
        if os.geteuid() != 0:
            raise JailError(devjail_available()[1])
        build_jail(_basic_nodes() + plan_nodes(args.allow))
    except (JailError, OSError) as exc:
        print(f"racperf devjail: not running {command[0]}: {exc}", file=sys.stderr, flush=True)
        return EXIT_UNAVAILABLE
    try:
        os.execvp(command[0], command)
    except FileNotFoundError:
        print(f"racperf devjail: {command[0]}: command not found", file=sys.stderr, flush=True)
        return EXIT_NOT_FOUND
    except OSError as exc:
        print(f"racperf devjail: {command[0]}: {exc.strerror}", file=sys.stderr, flush=True)
        return EXIT_CANNOT_EXECUTE
    return EXIT_UNAVAILABLE  # not reached: execvp returns only by raising


if __name__ == "__main__":
    raise SystemExit(main())
