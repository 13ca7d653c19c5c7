"""Landlock: the kernel's own list of what this process (and everything it executes) may write.

Landlock (Linux 5.13+, ``CONFIG_SECURITY_LANDLOCK`` and ``landlock`` in the active LSM list) lets
an unprivileged or root process restrict itself; the restriction survives ``execve`` and is
inherited by every child, and cannot be lifted. The device jail (core/guard/devjail.py) adds a
ruleset on top of its read-only mounts, right before it executes the benchmark:

* **writes** (``WRITE_FILE``, ``TRUNCATE`` from ABI 3) only to the cleared write targets, the
  run's directory (where creating, removing and renaming is allowed too) and the jail's
  harmless nodes (null, zero, full, random, urandom, a fresh /dev/shm);
* **nothing made anywhere else**: regular files, directories, symlinks, FIFOs, sockets and device
  nodes cannot be created or removed outside the run's directory, device nodes not even there;
* **execution** (``EXECUTE``) only of the benchmark's program and its ELF interpreter (the
  dynamic loader), when the program is an ELF file. The loader maps the libraries with
  ``mmap(PROT_EXEC)``, which Landlock does not govern: libraries need no rule. A script
  (``#!``) is left unrestricted: its interpreter may run further programs racperf cannot list.

Reads are not restricted (a benchmark reads what it likes; reading destroys nothing).

The syscalls are called through ctypes (Python 3.11 has no binding); their numbers are the same
on every architecture since Linux 5.1's unified table (444, 445, 446).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import struct
from collections.abc import Iterable
from dataclasses import dataclass

_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3

#: the rights a rule on a file (not a directory) may carry
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE

_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.syscall.restype = ctypes.c_long


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is __attribute__((packed))
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class LandlockError(OSError):
    """A ruleset could not be built or applied; the message says which step."""


def landlock_abi() -> tuple[int, str]:
    """(ABI version, "") when this kernel enforces Landlock, else (0, why not)."""
    version = _LIBC.syscall(
        _SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION)
    )
    if version > 0:
        return int(version), ""
    code = ctypes.get_errno()
    if code == 38:  # ENOSYS
        return 0, "this kernel has no Landlock (Linux 5.13+ with CONFIG_SECURITY_LANDLOCK)"
    if code == 95:  # EOPNOTSUPP
        return 0, "Landlock is built in but not enabled (add landlock to the kernel's lsm= list)"
    return 0, f"Landlock is refused here: {os.strerror(code)}"


def _handled(abi: int, restrict_exec: bool) -> int:
    rights = WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_SYM
    rights |= MAKE_CHAR | MAKE_BLOCK | MAKE_SOCK | MAKE_FIFO
    if restrict_exec:
        rights |= EXECUTE
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    return rights


def elf_interpreter(path: str) -> str | None:
    """The ELF interpreter (PT_INTERP) ``path`` names, "" for a static ELF file, None when
    ``path`` is not an ELF file (a script, or unreadable)."""
    try:
        with open(path, "rb") as file:
            head = file.read(64)
            if len(head) < 52 or head[:4] != b"\x7fELF" or head[4] not in (1, 2) or head[5] not in (1, 2):
                return None
            order = "<" if head[5] == 1 else ">"
            if head[4] == 2:  # 64-bit: e_phoff at 0x20, e_phentsize and e_phnum at 0x36
                phoff = struct.unpack_from(order + "Q", head, 0x20)[0]
                phentsize, phnum = struct.unpack_from(order + "HH", head, 0x36)
                entry_fmt, offset_at, size_at = order + "Q", 8, 32
            else:  # 32-bit: e_phoff at 0x1C, e_phentsize and e_phnum at 0x2A
                phoff = struct.unpack_from(order + "I", head, 0x1C)[0]
                phentsize, phnum = struct.unpack_from(order + "HH", head, 0x2A)
                entry_fmt, offset_at, size_at = order + "I", 4, 16
            file.seek(phoff)
            table = file.read(phentsize * phnum)
            for index in range(min(phnum, len(table) // max(phentsize, 1))):
                entry = table[index * phentsize : (index + 1) * phentsize]
                if struct.unpack_from(order + "I", entry, 0)[0] != 3:  # PT_INTERP
                    continue
                offset = struct.unpack_from(entry_fmt, entry, offset_at)[0]
                size = struct.unpack_from(entry_fmt, entry, size_at)[0]
                file.seek(offset)
                return file.read(min(size, 4096)).split(b"\0")[0].decode("utf-8", "surrogateescape")
    except (OSError, struct.error):
        return None
    return ""


@dataclass(frozen=True)
class ExecPlan:
    """What may be executed: ``allowed`` paths, or None with ``why`` execution is left alone."""

    allowed: tuple[str, ...] | None
    why: str = ""


def exec_plan(program: str) -> ExecPlan:
    """The files the benchmark needs to execute: its program (found on PATH as execvp finds
    it) and the program's ELF interpreter; execution left alone for a script or a program
    that cannot be read."""
    found = program if "/" in program else shutil.which(program)
    if not found:
        return ExecPlan(None, f"{program} is not on PATH")
    real = os.path.realpath(found)
    interpreter = elf_interpreter(real)
    if interpreter is None:
        return ExecPlan(None, f"{real} is not an ELF program (a script's interpreter may run others)")
    allowed = [real]
    if interpreter:
        allowed.append(os.path.realpath(interpreter))
    return ExecPlan(tuple(allowed))


@dataclass(frozen=True)
class WriteRules:
    """The paths the ruleset lets the benchmark write: ``files`` (open for writing, truncate)
    and ``dirs`` (everything beneath them: make, remove, rename files and directories; no
    device nodes)."""

    files: tuple[str, ...]
    dirs: tuple[str, ...]


def _add_rule(ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError as exc:
        raise LandlockError(exc.errno, f"Landlock rule for {path}: {exc.strerror}") from None
    try:
        attr = _PathBeneathAttr(rights, fd)
        if (
            _LIBC.syscall(
                _SYS_LANDLOCK_ADD_RULE,
                ctypes.c_int(ruleset),
                ctypes.c_int(_RULE_PATH_BENEATH),
                ctypes.byref(attr),
                ctypes.c_uint32(0),
            )
            != 0
        ):
            code = ctypes.get_errno()
            raise LandlockError(code, f"Landlock rule for {path}: {os.strerror(code)}")
    finally:
        os.close(fd)


def restrict_self(abi: int, writes: WriteRules, executable: Iterable[str] | None) -> None:
    """Apply the ruleset to this process (and what it executes from now on). ``executable``:
    the only files that may be executed, or None to leave execution alone."""
    restrict_exec = executable is not None
    handled = _handled(abi, restrict_exec)
    attr = _RulesetAttr(handled)
    ruleset = _LIBC.syscall(
        _SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0)
    )
    if ruleset < 0:
        code = ctypes.get_errno()
        raise LandlockError(code, f"landlock_create_ruleset: {os.strerror(code)}")
    try:
        file_write = handled & (WRITE_FILE | TRUNCATE)
        dir_write = handled & ~(EXECUTE | MAKE_CHAR | MAKE_BLOCK)
        rules: dict[str, int] = {}
        for path in writes.files:
            rules[path] = rules.get(path, 0) | file_write
        for path in writes.dirs:
            rules[path] = rules.get(path, 0) | dir_write
        for path in executable or ():
            rules[path] = rules.get(path, 0) | EXECUTE
        for path, rights in rules.items():
            if not os.path.isdir(path):
                rights &= _FILE_RIGHTS
            _add_rule(ruleset, path, rights)
        if _LIBC.syscall(_SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            code = ctypes.get_errno()
            raise LandlockError(code, f"landlock_restrict_self: {os.strerror(code)}")
    finally:
        os.close(ruleset)
