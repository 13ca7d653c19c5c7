"""Whether a program (or a directory of code, or a file racperf reads as settings) may be trusted
by racperf running as root: the file and every directory on the way to it are owned by root or
by the user racperf runs as, and none is writable by group or others, as sudo's secure path and
OpenSSH's StrictModes judge. Otherwise another user could have put, or could later put, their
own code there, and racperf would run it with its own rights.

Every component is examined as the kernel walks it (lstat, symlinks followed one by one, the
directories they lead through examined too), so a symlink cannot send the walk through a
directory the check never saw. One exception, for /tmp-like directories: a sticky directory
(mode +t) may be writable by others when the entry below it is owned by root or the user, since
then only they (and the directory's owner, also checked) can rename or remove that entry.

A refusal is a :class:`UntrustedPath` (a ValueError) naming the path, its owner and its mode.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: how many symlinks a walk follows before giving up (the kernel's limit is 40)
_MAX_LINKS = 40


class UntrustedPath(ValueError):
    """A path racperf refuses to run or read as trusted code or settings: the message names the
    path, its owner and its mode, and what was being vetted. ``owner``: the name of the user
    who owns the refused entry when that is why (None: its mode, or another reason)."""

    def __init__(self, message: str, owner: str | None = None) -> None:
        super().__init__(message)
        self.owner = owner


@dataclass(frozen=True)
class Vetted:
    """A program that passed: ``path`` as given (resolved through PATH when it was a bare
    name) and ``real`` the file that will be executed."""

    path: str
    real: str


def owner_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


@dataclass(frozen=True)
class Entry:
    """What the walk needs of one path (its lstat): owner and mode."""

    uid: int
    mode: int


class PathFacts:
    """Where the walk reads entries: this machine (another node's facts: core/remote/node_vetting.py).
    ``owners``: the users trusted besides root (the one racperf runs as there)."""

    where = ""

    def lstat(self, path: str) -> Entry:
        st = os.lstat(path)
        return Entry(st.st_uid, st.st_mode)

    def readlink(self, path: str) -> str:
        return os.readlink(path)

    def owners(self) -> frozenset[int]:
        return frozenset({0, os.geteuid()})

    def user_name(self, uid: int) -> str:
        return owner_name(uid)


LOCAL_FACTS = PathFacts()


def describe_entry(path: str, entry: Entry, facts: PathFacts) -> str:
    return f"{path}{facts.where} (owner {facts.user_name(entry.uid)}, mode {stat.filemode(entry.mode)})"


#: what another user could do through an untrusted entry, said in every refusal
RUNS_CODE = "another user could change what racperf runs as root"


def _judge(path: str, entry: Entry, what: str, facts: PathFacts, risk: str = RUNS_CODE) -> None:
    """Refuse one walked entry. A sticky directory writable by others passes: each entry below
    it is judged in turn, and one owned by a trusted user cannot be renamed or removed there
    by anyone else."""
    owners = facts.owners()
    if entry.uid not in owners:
        others = sorted(uid for uid in owners if uid != 0)
        raise UntrustedPath(
            f"{what}: {describe_entry(path, entry, facts)} is not owned by root"
            + "".join(f" or {facts.user_name(uid)}" for uid in others)
            + f": {risk}",
            facts.user_name(entry.uid),
        )
    if stat.S_ISLNK(entry.mode):
        return  # a link's own mode means nothing; its directory and its target are examined
    sticky_dir = stat.S_ISDIR(entry.mode) and entry.mode & stat.S_ISVTX
    if entry.mode & 0o022 and not sticky_dir:
        raise UntrustedPath(
            f"{what}: {describe_entry(path, entry, facts)} is writable by " + writers(entry.mode) + f": {risk}"
        )


def writers(mode: int) -> str:
    return "group and others" if mode & 0o022 == 0o022 else "its group" if mode & 0o020 else "others"


def vet_path(path: str, what: str, facts: PathFacts = LOCAL_FACTS, risk: str = RUNS_CODE) -> str:
    """Walk absolute ``path`` as the kernel would and judge every entry on the way; return the
    real path. OSError when a component does not exist; UntrustedPath when one is not trusted
    (``risk``: what another user could do through it, said in the refusal)."""
    if not path.startswith("/"):
        raise UntrustedPath(f"{what}: {path!r} is not an absolute path")
    pending = [part for part in path.split("/") if part]
    current = "/"
    _judge("/", facts.lstat("/"), what, facts, risk)
    links = 0
    while pending:
        part = pending.pop(0)
        if part == ".":
            continue
        if part == "..":
            current = os.path.dirname(current) or "/"
            continue
        candidate = os.path.join(current, part)
        entry = facts.lstat(candidate)
        _judge(candidate, entry, what, facts, risk)
        if stat.S_ISLNK(entry.mode):
            links += 1
            if links > _MAX_LINKS:
                raise UntrustedPath(f"{what}: {path} has more than {_MAX_LINKS} symbolic links on its way")
            target = facts.readlink(candidate)
            pending = [p for p in target.split("/") if p] + pending
            if target.startswith("/"):
                current = "/"
            continue
        current = candidate
    return current


def resolve_program(program: str, search_path: str | None = None) -> str:
    """The absolute file a program name or path names (a bare name through PATH); OSError
    (FileNotFoundError) when there is none."""
    if "/" in program:
        return os.path.abspath(os.path.expanduser(program))
    found = shutil.which(program, path=search_path)
    if found is None:
        raise FileNotFoundError(f"{program}: not found on PATH")
    return os.path.abspath(found)


def vet_program(program: str, what: str, search_path: str | None = None, facts: PathFacts = LOCAL_FACTS) -> Vetted:
    """Vet the program ``program`` (a path, or a bare name looked up in PATH here; an absolute
    path on another node's ``facts``) that racperf is about to run for ``what`` (e.g. "iperf3
    binary="): UntrustedPath when it, or a directory on its way, could be changed by another
    user; FileNotFoundError when it does not exist."""
    if facts is LOCAL_FACTS:
        vet_loader_environment(what)
    path = resolve_program(program, search_path) if facts is LOCAL_FACTS else program
    real = vet_path(path, what, facts)
    if not stat.S_ISREG(facts.lstat(real).mode):
        raise UntrustedPath(f"{what}: {path}{facts.where} is not a regular file")
    return Vetted(path, real)


def vet_loader_environment(what: str, environ: Mapping[str, str] | None = None) -> None:
    """The dynamic loader's variables of this environment, which every program started from it
    inherits, vetted like the program: each LD_LIBRARY_PATH directory (an empty or relative one
    is the working directory) and each LD_PRELOAD / LD_AUDIT library named with a path (a bare
    name is looked up in those directories and the system's). ``. oraenv`` leaves
    LD_LIBRARY_PATH=$ORACLE_HOME/lib, the oracle user's: fio loaded a library from there as root."""
    environ = os.environ if environ is None else environ
    library_path = environ.get("LD_LIBRARY_PATH", "")  # glibc splits it at ':' and ';'
    named = [(d or ".", "LD_LIBRARY_PATH") for d in re.split("[:;]", library_path)] if library_path else []
    for variable in ("LD_PRELOAD", "LD_AUDIT"):
        named += [(f, variable) for f in environ.get(variable, "").replace(" ", ":").split(":") if "/" in f]
    for path, variable in named:
        try:
            vet_path(os.path.abspath(path), f"{what} ({variable})")
        except FileNotFoundError:
            pass  # its trusted parent lacks it: nobody else can make it


def vet_tree(directory: str, what: str, subdirectories: Iterable[str] = (), facts: PathFacts = LOCAL_FACTS) -> str:
    """Vet a directory whose code racperf uses (an ORACLE_HOME: its ``bin`` and ``lib``), and
    each of ``subdirectories`` below it that exists; return the directory's real path."""
    start = os.path.abspath(os.path.expanduser(directory)) if facts is LOCAL_FACTS else directory
    real = vet_path(start, what, facts)
    for sub in subdirectories:
        try:
            vet_path(os.path.join(real, sub), what, facts)
        except FileNotFoundError:
            pass  # its trusted parent lacks it: nobody else can make it
    return real


def vet_file_for_reading(path: str, what: str) -> str:
    """Vet a file racperf reads as trusted (settings that name programs) the same way."""
    return vet_path(os.path.abspath(path), what)


class Vetter:
    """The vetting functions over one place's facts: this machine here; another node's through
    core/remote/node_vetting.NodeVetter (the same judgement, the facts asked over SSH)."""

    def __init__(self, facts: PathFacts = LOCAL_FACTS) -> None:
        self.facts = facts

    def program(self, program: str, what: str) -> Vetted:
        return vet_program(program, what, facts=self.facts)

    def tree(self, directory: str, what: str, subdirectories: Iterable[str] = ()) -> str:
        return vet_tree(directory, what, subdirectories, self.facts)

    def path(self, path: str, what: str) -> str:
        return vet_path(path, what, self.facts)


LOCAL_VETTER = Vetter()
