"""The kernel net: run a benchmark in a private mount namespace where it can write only what
the write guard cleared.

    python -m racperf_tui.core.guard.devjail --allow /dev/mapper/test1 [--allow PATH]...
        [--write PATH]... -- fio ARGS...

The jail unshares a private mount namespace (``unshare(CLONE_NEWNS)``; Python 3.11 has no
``os.unshare``, so libc through ctypes), makes every mount private so nothing propagates back
to the host, and then, as systemd's ProtectSystem=strict and PrivateDevices:

1. **every mount read-only and nodev** (core/guard/strict_mounts.py): no regular file can be
   written, truncated, created or removed anywhere (EROFS), no device node opened outside the
   jail's /dev (EACCES), wherever it was made;
2. **a private /dev**: the host's /dev is detached and a fresh tmpfs mounted on /dev holding only

   * ``null``, ``zero``, ``full``, ``random``, ``urandom`` (copied from the host's nodes);
   * each ``--allow``ed device, as a real node with the same major:minor, mode and owner, at the
     very path it was given (``/dev/mapper/test1``, ``/dev/disk/by-id/x``; parent directories
     are created).  A symlink is resolved to its device number and made a node at the given
     path; a path outside /dev that leads into /dev (``~/mydisk -> /dev/loop5``) gets the node
     it leads to. A device node elsewhere (made with mknod outside /dev) is bound onto itself
     without nodev, so the cleared one opens and no other;
   * ``shm`` (a fresh tmpfs), ``fd -> /proc/self/fd``, ``stdin``, ``stdout``, ``stderr``;

   then remounted read-only (a device node opens for writing on a read-only mount: only the
   nodes that are there can be reached, a mistyped name is neither opened (ENOENT) nor created
   as a file in memory (EROFS));
3. **writable again, one by one**, each ``--write`` path outside /dev bound onto itself
   read-write: the cleared write target files (a missing one is created first, as the
   benchmark would create it: parents 0700, the file 0644 under the umask) and the run's
   directory. Nothing else: not /tmp, not the scratch directory (fio's scratch *file* is a
   target), not the data directory holding the runs' database;
4. **Landlock** (core/guard/landlock.py) where the kernel enforces it: writes only to the
   ``--write`` paths (and the jail's null, zero, full, random, urandom, /dev/shm), nothing made
   or removed elsewhere, and execution only of the program and its ELF interpreter when the
   program is an ELF file.

Then the jail ``execvp``s the command: the pid the supervisor started and tracks is the
benchmark itself, signals reach it directly, and /proc-based process-tree tracking keeps
working.

When the jail cannot be built (not root, ``unshare`` refused, a kernel without mount
namespaces, an allowed path that is missing or not a device, a mount that cannot be made
read-only, a Landlock ruleset the kernel refuses) nothing is executed: it exits with
:data:`EXIT_UNAVAILABLE` and says why on stderr.  :func:`kernel_net` answers the same
questions beforehand so a run's record (and the UI, before it starts) can say which
protections are active and which are missing.
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import os
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field

from racperf_tui.core.guard.isolated_python import isolated_module_argv, module_of_argv
from racperf_tui.core.guard.landlock import LandlockError, WriteRules, exec_plan, landlock_abi, restrict_self
from racperf_tui.core.guard.strict_mounts import (
    CLONE_NEWNS,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_RDONLY,
    MS_REMOUNT,
    bind_device,
    bind_writable,
    enter_private_namespace,
    make_all_read_only,
)

#: exit status when the jail could not be set up; the command was not executed
EXIT_UNAVAILABLE = 125
#: the module a jailed command is started through
JAIL_MODULE = "racperf_tui.core.guard.devjail"
#: the command was found but could not be executed / was not found (as env(1) and the shell)
EXIT_CANNOT_EXECUTE = 126
EXIT_NOT_FOUND = 127

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


#: a file the guard judged, as (st_dev, st_ino): the jail binds that very file writable, or none
Identity = tuple[int, int]


def jail_argv(
    argv: list[str],
    allowed: list[str],
    writable: list[str] | tuple[str, ...] = (),
    judged: Mapping[str, Identity] | None = None,
) -> list[str]:
    """``argv`` run inside a jail that allows the devices ``allowed`` and writes to ``writable``
    (an isolated python: its working directory and PYTHON* variables reach nothing it imports).
    ``judged``: the write target files the guard judged and which file each was; the jail
    binds exactly those files (by their descriptors) and refuses to run if one was replaced."""
    options = [word for path in allowed for word in ("--allow", path)]
    options += [word for path in writable for word in ("--write", path)]
    options += [word for path, (dev, ino) in (judged or {}).items() for word in ("--judged", f"{dev}:{ino}:{path}")]
    return isolated_module_argv(JAIL_MODULE, *options, "--", *argv)


def parse_judged(values: list[str]) -> dict[str, Identity]:
    """``--judged DEV:INO:PATH`` values as path -> identity."""
    found = {}
    for value in values:
        dev, ino, path = value.split(":", 2)
        found[path] = (int(dev), int(ino))
    return found


def unjail_argv(argv: list[str]) -> tuple[list[str], list[str]] | None:
    """(the command, the allowed paths) of an argv made by :func:`jail_argv`; None for another."""
    found = module_of_argv(argv)
    if found is None or found[0] != JAIL_MODULE or "--" not in found[1]:
        return None
    rest = found[1]
    split = rest.index("--")
    options, command = rest[:split], rest[split + 1 :]
    if len(options) % 2 or any(word not in ("--allow", "--write", "--judged") for word in options[::2]):
        return None
    return command, [value for word, value in zip(options[::2], options[1::2], strict=True) if word == "--allow"]


@dataclass(frozen=True)
class KernelNet:
    """What the kernel will enforce for a run, each a sentence for the run's record and the UI:
    ``active`` protections, ``missing`` ones (what keeps data safe and this machine cannot
    give: asked about before a run starts), ``notes`` (what is deliberately left alone)."""

    jailed: bool
    active: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def missing_protections() -> list[str]:
    """The kernel's protections this machine cannot give a run, each a sentence naming it and
    why (empty when the jail and Landlock are both there); changes nothing."""
    abi, why_not = landlock_abi()
    available, why = devjail_available()
    if not available:
        return [
            f"read-only mounts not active: {why}",
            f"device jail not active: {why}",
            f"Landlock not active: {why if abi else why_not}",
        ]
    return [] if abi else [f"Landlock not active: {why_not}"]


def kernel_net(command: list[str], allowed: list[str], writable: list[str]) -> KernelNet:
    """The protections the jail gives ``command`` here (and the ones this machine lacks), as
    :func:`main` will build them; changes nothing."""
    missing = missing_protections()
    if missing and missing[0].startswith("read-only mounts"):
        return KernelNet(False, missing=missing)
    shown = ", ".join(writable) or "nothing"
    net = KernelNet(
        True,
        active=[
            f"read-only mounts: every mount read-only and nodev for the run; writable: {shown}",
            "device jail: /dev holds only " + (", ".join(allowed) or "null, zero, full, random, urandom"),
        ],
        missing=missing,
    )
    abi = landlock_abi()[0]
    if not abi:
        return net
    net.active.append(f"Landlock (ABI {abi}): writes only to {shown}")
    execution = exec_plan(command[0])
    if execution.allowed is not None:
        net.active.append(f"Landlock (ABI {abi}): executes only {', '.join(execution.allowed)}")
    else:
        net.notes.append(f"execution not restricted: {execution.why}")
    return net


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


def writable_paths(given: list[str]) -> tuple[list[str], list[str]]:
    """(paths outside /dev to bind writable, device nodes in the jail's /dev that may be
    written) for the ``--write`` paths: a device is reached at its node in the jail, anything
    else at its real path (a symlink's target: the bind is made there)."""
    outside, nodes = [], []
    for path in given:
        node = _node_path(path)
        if node is not None:
            nodes.append(node)
        else:
            outside.append(os.path.realpath(path))
    return list(dict.fromkeys(outside)), list(dict.fromkeys(nodes))


def create_missing(paths: list[str]) -> dict[str, Identity]:
    """A write target that does not exist yet made as the benchmark would make it (fio: parent
    directories 0700, the file 0644 under the umask), so it can be bound writable; returns
    which file each made is (``O_EXCL``: never a name someone planted)."""
    made = {}
    for path in paths:
        if os.path.lexists(path):
            continue
        os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        st = os.fstat(fd)
        os.close(fd)
        made[path] = (st.st_dev, st.st_ino)
    return made


def identities_now(paths: list[str]) -> dict[str, Identity]:
    """Which file each path leads to now (a write target nobody judged for this jail: the jail's
    own caller named it; the supervisor always passes the guard's ``--judged``)."""
    found = {}
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            found[path] = (st.st_dev, st.st_ino)
    return found


def bind_judged_files(judged: Mapping[str, Identity]) -> dict[str, int]:
    """Each judged file bound writable by a descriptor of that very file: opened as the
    benchmark will open it (links followed), fstat'ed, refused (JailError) unless it is the
    file the guard judged, then /proc/self/fd/N bound onto the path. Whatever the path leads to
    by then (a link swapped in by another user), only the judged file becomes writable.
    Returns the descriptors (path -> fd), kept for Landlock's rules."""
    fds = {}
    for path, identity in judged.items():
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        fds[path] = fd
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != identity:
            raise JailError(
                f"{path} is no longer the file the write guard judged (another file or a link took its "
                "place since): nothing runs"
            )
        bind_writable(path, f"/proc/self/fd/{fd}")
    return fds


def build_jail(
    nodes: list[JailNode],
    writable: list[str] | None = None,
    devices_elsewhere: list[str] | None = None,
    judged: Mapping[str, Identity] | None = None,
) -> dict[str, int]:
    """Turn this process's view of the system into the jail (see the module docstring).  Only
    after ``unshare`` succeeded does anything change, and only in the new namespace.
    ``writable``: directories (and files nobody judged) bound by path; ``judged``: files bound
    by descriptor (:func:`bind_judged_files`), whose descriptors are returned."""
    enter_private_namespace()
    make_all_read_only()
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
    _mount("racperf-devjail-shm", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    _mount(None, "/dev", None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC, None)
    for path in writable or []:
        bind_writable(path)
    fds = bind_judged_files(judged or {})
    for path in devices_elsewhere or []:
        bind_device(path)
    # the working directory still names the directory on the mount beneath the binds (made
    # read-only): entered again by its path, it is the writable bind on top
    os.chdir(os.getcwd())
    return fds


def _devices_elsewhere(allowed: list[str]) -> list[str]:
    """The allowed device nodes that never go through /dev (made with mknod elsewhere): their
    real paths, to be bound without nodev."""
    found = []
    for given in allowed:
        if _node_path(given) is not None:
            continue
        real = os.path.realpath(given)
        try:
            mode = os.stat(real).st_mode
        except OSError:
            continue
        if stat.S_ISBLK(mode) or stat.S_ISCHR(mode):
            found.append(real)
    return list(dict.fromkeys(found))


def _temporary_directory(writable_dirs: list[str]) -> str:
    """Where the jailed tool's temporary files go: every mount is read-only in the jail, /tmp
    included (Python's tempfile found "no usable temporary directory" and the probe server
    died), so its working directory when that is one it may write (the run's directory), else
    the jail's /dev/shm."""
    here = os.getcwd()
    for path in writable_dirs:
        if here == path or here.startswith(path.rstrip("/") + "/"):
            return here
    return "/dev/shm"


def main(argv: list[str] | None = None) -> int:
    """Entry point: build the jail and exec the command; returns only on failure."""
    parser = argparse.ArgumentParser(
        prog="python -m racperf_tui.core.guard.devjail",
        description="Run a command with read-only mounts and a private /dev that holds only the allowed devices.",
    )
    parser.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="PATH",
        help="a device the command may open, at this path (repeatable)",
    )
    parser.add_argument(
        "--write",
        action="append",
        default=[],
        metavar="PATH",
        help="a file, device or directory the command may write (repeatable)",
    )
    parser.add_argument(
        "--judged",
        action="append",
        default=[],
        metavar="DEV:INO:PATH",
        help="a --write file as the write guard judged it: bound only if it is still that file (repeatable)",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD ARGS...")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given (put it after --)")
    try:
        if os.geteuid() != 0:
            raise JailError(devjail_available()[1])
        nodes = _basic_nodes() + plan_nodes(args.allow)
        judged = parse_judged(args.judged)
        elsewhere = _devices_elsewhere(args.allow)
        # the judged files are bound by descriptor at the path given, never at a realpath taken
        # now (a link swapped in since would lead the bind to another file)
        outside, write_nodes = writable_paths([p for p in args.write if p not in judged])
        judged |= create_missing([p for p in outside if p not in elsewhere])
        judged |= identities_now([p for p in outside if p not in judged and p not in elsewhere])
        by_path = [p for p in outside if p not in judged and p not in elsewhere]
        abi, _ = landlock_abi()
        execution = exec_plan(command[0])
        fds = build_jail(nodes, by_path, elsewhere, judged)
        if abi:
            harmless = [f"/dev/{name}" for name in BASIC_NODES]
            # a judged file's rule is its descriptor: the file itself, wherever its path leads now
            files = [f"/proc/self/fd/{fd}" for fd in fds.values()]
            # a device elsewhere is in ``outside`` when it is written; one only read gets no rule
            files += [p for p in by_path + elsewhere if p in outside and not os.path.isdir(p)] + write_nodes + harmless
            dirs = [p for p in by_path if os.path.isdir(p)] + ["/dev/shm"]
            restrict_self(abi, WriteRules(tuple(files), tuple(dirs)), execution.allowed)
        os.environ["TMPDIR"] = _temporary_directory([p for p in by_path if os.path.isdir(p)])
        for fd in fds.values():
            os.close(fd)
    except (JailError, LandlockError, OSError) as exc:
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
