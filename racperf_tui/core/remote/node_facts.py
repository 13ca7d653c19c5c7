"""The write guard's facts of another node, gathered over SSH and laid out as a root here.

The guard (core/guard/safety.py, core/guard/target_guard.py) reads a root's proc/ and sys/ files and asks a
:class:`~racperf_tui.core.guard.openfds.System` everything else. :func:`gather_and_judge` gives it
both for a node, with nothing but a POSIX sh there (cat, ls, stat, readlink, dd, od; python only
for the exclusive-open probe):

1. one command (:data:`BASE_SH`) prints, between lines starting with a random mark: the shell's
   pid, /proc/self/mountinfo, /proc/swaps, the /sys/block tree the guard walks (dev, size,
   uevent's DEVNAME, partition, holders/, loop/backing_file and offset, dm/name and uuid,
   md/level, for every device and partition), every process's open files (``ls -lq
   /proc/[0-9]*/fd/``: the link texts; the directories it could not open), every mount
   namespace and one mountinfo per namespace other than the login's, the fdinfo (flags,
   mnt_id) of every fd (``xargs head -n 3``) and every comm;
2. the guard runs against :class:`NodeFacts` (in /dev/shm). A question it has no answer to yet
   (a path's stat, an open file's stat, a realpath, a listing, a block of the target, the
   exclusive-open probe) is remembered and answered as "unknown"; the wanted facts are then
   gathered in one command (:data:`PATHS_SH`, every path one quoted argument, nothing in it
   expanded; the stats of open files in one ``xargs stat``), and the guard runs again, until it
   asks nothing new (at most :data:`MAX_ROUNDS` times; 2 rounds for a free device, 3 for a
   mistyped name). Its decisions about what to stat (never a file on a network or cluster file
   system) are the local ones, made here on the node's facts. A target's stat, realpath and
   first 128 KiB are asked for with the first round; only block devices and regular files are
   ever opened there.

What the node would not give (a section unreadable, an answer too large, a question still open
after the last round) becomes a sentence in ``unchecked``: every write target is refused with
it. Nothing is ever written on the node, and every temp root is removed.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import shlex
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from racperf_tui.core.contract.invocation import Target
from racperf_tui.core.guard.safety import HEAD_BYTES, SafetyVerdict, check_write_target
from racperf_tui.core.guard.target_guard import GuardVerdict, judge
from racperf_tui.core.remote.ssh import Connection
from racperf_tui.core.textio.bounded_read import read_regular_text_bounded

T = TypeVar("T")

#: $1 the mark. Reads only; every value through `read` (no fork per file).
BASE_SH = r"""
m=$1
export LC_ALL=C
printf '%s pid\n%s\n' "$m" "$$"
printf '%s mountinfo\n' "$m"; cat /proc/self/mountinfo 2>/dev/null || printf '\n%s unreadable\n' "$m"
printf '%s swaps\n' "$m"; cat /proc/swaps 2>/dev/null || printf '\n%s unreadable\n' "$m"
facts() {
  for f in dev size partition loop/backing_file loop/offset dm/name dm/uuid md/level; do
    if [ -r "$2/$f" ] && { v=; read -r v < "$2/$f" || [ -n "$v" ]; }; then printf 'F %s %s %s\n' "$1" "$f" "$v"; fi
  done
  if [ -r "$2/uevent" ]; then
    while read -r v; do case $v in DEVNAME=*) printf 'F %s uevent %s\n' "$1" "$v";; esac; done < "$2/uevent"
  fi
  for h in "$2"/holders/*; do
    [ -e "$h" ] || [ -L "$h" ] || continue
    printf 'H %s %s\n' "$1" "${h##*/}"
  done
}
printf '%s sysfs\n' "$m"
if [ -d /sys/block ]; then
  for d in /sys/block/*; do
    [ -d "$d" ] || continue
    n=${d##*/}
    printf 'D %s\n' "$n"
    facts "$n" "$d"
    for p in "$d"/*/partition; do
      [ -f "$p" ] || continue
      p=${p%/partition}
      printf 'P %s %s\n' "$n" "${p##*/}"
      facts "$n/${p##*/}" "$p"
    done
  done
else
  printf '\n%s unreadable\n' "$m"
fi
printf '%s fds\n' "$m"
exec 3>&1
e=$(ls -lq /proc/[0-9]*/fd/ 2>&1 >&3 3>&-)
exec 3>&-
printf '%s fderrors\n%s\n' "$m" "$e"
printf '%s mntns\n' "$m"
ls -l /proc/self/ns/mnt /proc/[0-9]*/ns/mnt 2>/dev/null
own=$(readlink "/proc/$$/ns/mnt" 2>/dev/null)
ls -l /proc/[0-9]*/ns/mnt 2>/dev/null | awk -v own="$own" '
  $(NF-1) == "->" && $NF != own && !($NF in seen) { seen[$NF] = 1; split($(NF-2), part, "/"); print part[3] }' |
  while read -r p; do printf '%s nsmountinfo %s\n' "$m" "$p"; cat "/proc/$p/mountinfo" 2>/dev/null; done
printf '%s fdinfo\n' "$m"
for p in /proc/[0-9]*; do printf '%s\n' "$p"/fdinfo/[0-9]*; done | xargs head -n 3 /dev/null 2>/dev/null
printf '%s comm\n' "$m"
for p in /proc/[0-9]*; do c=; read -r c < "$p/comm" 2>/dev/null; printf '%s %s\n' "${p#/proc/}" "$c"; done
printf '%s end\n' "$m"
"""

#: $1 the mark, then (kind, path, extra) triples: one answer each, after "MARK r INDEX"; first
#: the stats of the open files listed on stdin (paths we built: /proc/PID/fd/N), in bulk.
#: The python of the exclusive-open probe runs isolated as python 2 allows it too (-E -s -S: no
#: PYTHON* variables, no site code) from /: a module in the login's home never runs.
#: Only block devices and regular files are ever opened (the target's head is asked for with
#: its stat, before its type is known here): a FIFO would block, a tape rewind, a watchdog arm.
PATHS_SH = r"""
m=$1; shift
export LC_ALL=C
printf '%s bulk\n' "$m"
xargs stat -L -c '%n|%f %t %T %d %i %s' -- 2>/dev/null
exec </dev/null
py=
for c in python3 python; do if command -v "$c" >/dev/null 2>&1; then py=$c; break; fi; done
i=0
while [ $# -ge 3 ]; do
  k=$1 p=$2 x=$3; shift 3
  printf '%s r %s\n' "$m" "$i"
  case $k in
  stat) stat -L -c '%f %t %T %d %i %s' -- "$p" 2>&1 ;;
  realpath) readlink -m -- "$p" 2>/dev/null || readlink -f -- "$p" 2>/dev/null || printf '%s\n' "$p" ;;
  isdir) if [ -d "$p" ]; then echo y; else echo n; fi ;;
  lexists) if [ -e "$p" ] || [ -L "$p" ]; then echo y; else echo n; fi ;;
  list) if [ -d "$p" ] && [ -r "$p" ]; then echo ok; ls -1Aq -- "$p" 2>/dev/null; else echo err; fi ;;
  open)
    if ! { [ -b "$p" ] || [ -f "$p" ]; }; then echo "err not a block device or a regular file"
    elif (exec 3<"$p") 2>/dev/null; then echo ok
    else echo "err $( (exec 3<"$p") 2>&1 )"; fi ;;
  read)
    if [ -b "$p" ] || [ -f "$p" ]; then
      dd if="$p" bs=512 skip="${x%:*}" count="${x#*:}" 2>/dev/null | od -An -v -tx1
    fi ;;
  excl)
    if ! [ -b "$p" ]; then
      echo free
    elif [ -n "$py" ]; then
      (cd / && exec "$py" -E -s -S -c 'import errno, os, sys
try:
    fd = os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL | os.O_NONBLOCK)
except OSError as exc:
    print("busy" if exc.errno == errno.EBUSY else "free")
else:
    os.close(fd)
    print("free")' "$p") 2>/dev/null || echo none
    else
      echo none
    fi ;;
  esac
  i=$((i+1))
done
printf '%s end\n' "$m"
"""

#: the first blocks of a target, asked for with its stat (512-byte blocks: first:count)
HEAD_READ = f"0:{HEAD_BYTES // 512}"
#: rounds of questions (each one command on the node) before what is still open is unchecked
MAX_ROUNDS = 8
#: the most the node may send in one answer (a node with 100,000 open files sends about 10 MB)
MAX_ANSWER_BYTES = 64 << 20
#: seconds one command may take
COMMAND_TIMEOUT_S = 60.0
#: paths we pass in bulk to xargs: only what we built ourselves (/proc/PID/fd/N ...)
_BULK_SAFE = re.compile(r"^/proc/[0-9]+/(fd|fdinfo)/[0-9]+$")
_SYSFS_FILES = frozenset(
    {"dev", "size", "partition", "loop/backing_file", "loop/offset", "dm/name", "dm/uuid", "md/level", "uevent"}
)
#: what stat(1), dd and sh say -> errno, so reasons read as the local ones (os.strerror)
_ERRORS = (
    ("No such file or directory", errno.ENOENT),
    ("Permission denied", errno.EACCES),
    ("Operation not permitted", errno.EPERM),
    ("Not a directory", errno.ENOTDIR),
    ("No such device or address", errno.ENXIO),
    ("No such device", errno.ENODEV),
    ("Too many levels of symbolic links", errno.ELOOP),
    ("File name too long", errno.ENAMETOOLONG),
    ("Device or resource busy", errno.EBUSY),
)


def _errno_of(message: str) -> int:
    for text, number in _ERRORS:
        if text in message:
            return number
    return errno.EIO


def _safe_name(name: str) -> bool:
    return bool(name) and "/" not in name and name not in (".", "..") and "\0" not in name


class FactMissing(OSError):
    """A question the gathered facts cannot answer yet (asked on the next round)."""


@dataclass(frozen=True)
class NodeStat:
    """What the guard reads of a stat, from ``stat -L -c '%f %t %T %d %i %s'`` on the node."""

    st_mode: int
    st_rdev: int
    st_dev: int
    st_ino: int
    st_size: int


class NodeReader:
    """A target "opened" on the node: its blocks come from the gathered reads."""

    def __init__(self, facts: NodeFacts, path: str, st: NodeStat) -> None:
        self.facts, self.path, self.st = facts, path, st

    def rdev(self) -> int:
        return self.st.st_rdev

    def identity(self) -> tuple[int, int] | None:
        """None: the node's head and stat are separate answers, not one descriptor's."""
        return None

    def size_bytes(self) -> int:
        if not stat.S_ISBLK(self.st.st_mode):
            return self.st.st_size
        sectors = self.facts.sysfs_size(os.major(self.st.st_rdev), os.minor(self.st.st_rdev))
        if sectors is None:
            self.facts.note_unchecked(f"the size of {self.path} (no sysfs size for it on the node)")
            return 0
        return sectors * 512

    def pread(self, offset: int, length: int) -> bytes:
        if length <= 0 or offset < 0:
            return b""
        if offset + length <= HEAD_BYTES:  # the head is asked for with the target's stat
            data = self.facts.answer(("read", self.path, HEAD_READ))
            assert isinstance(data, bytes)
            return data[offset : offset + length]
        first = offset // 512
        count = (offset + length + 511) // 512 - first
        data = self.facts.answer(("read", self.path, f"{first}:{count}"))
        assert isinstance(data, bytes)
        start = offset - first * 512
        return data[start : start + length]

    def close(self) -> None:
        pass


@dataclass
class NodeFacts:
    """A node's facts under :attr:`root` (proc/ and sys/ files) and in :attr:`answers` (the
    rest), as a :class:`~racperf_tui.core.guard.openfds.System`. Questions without an answer go to
    :attr:`wanted` and raise :class:`FactMissing` (an OSError: the guard treats it as "could
    not be examined" until the next round answers it)."""

    root: Path
    node: str
    own_pids: frozenset[str] = frozenset()
    answers: dict[tuple[str, str, str], object] = field(default_factory=dict)
    wanted: set[tuple[str, str, str]] = field(default_factory=set)
    unreadable_pids: set[str] = field(default_factory=set)
    unchecked: list[str] = field(default_factory=list)

    def note_unchecked(self, what: str) -> None:
        sentence = f"could not check {what} on {self.node}"
        if sentence not in self.unchecked:
            self.unchecked.append(sentence)

    def answer(self, key: tuple[str, str, str]) -> object:
        if key not in self.answers:
            self.wanted.add(key)
            raise FactMissing(errno.EAGAIN, f"not gathered yet from {self.node}", key[1])
        return self.answers[key]

    def _node_path(self, path: str) -> str:
        """A path under our root (an fd link the guard builds from ``root/proc``) -> the node's."""
        base = str(self.root)
        return path[len(base) :] if path.startswith(base + "/") else path

    # ---- the System protocol --------------------------------------------------------------
    def stat(self, path: str) -> NodeStat:
        found = self.answer(("stat", self._node_path(path), ""))
        if isinstance(found, int):
            raise OSError(found, os.strerror(found), path)
        assert isinstance(found, NodeStat)
        return found

    def realpath(self, path: str) -> str:
        try:
            found = self.answer(("realpath", path, ""))
        except FactMissing:
            return path
        return str(found)

    def lexists(self, path: str) -> bool:
        try:
            return bool(self.answer(("lexists", path, "")))
        except FactMissing:
            return True

    def isdir(self, path: str) -> bool:
        try:
            return bool(self.answer(("isdir", path, "")))
        except FactMissing:
            return True

    def listdir(self, path: str) -> list[str]:
        found = self.answer(("list", path, ""))
        if isinstance(found, int):
            raise OSError(found, os.strerror(found), path)
        assert isinstance(found, list)
        return list(found)

    def fd_names(self, fd_dir: str) -> list[str]:
        pid = Path(fd_dir).parent.name
        if pid in self.unreadable_pids:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), fd_dir)
        return os.listdir(fd_dir)

    def open_reader(self, path: str) -> NodeReader:
        opened = self.answer(("open", path, ""))
        if opened is not True:
            number = opened if isinstance(opened, int) else errno.EIO
            raise OSError(number, os.strerror(number), path)
        return NodeReader(self, path, self.stat(path))

    def exclusive_open_busy(self, node: str) -> bool | None:
        try:
            found = self.answer(("excl", node, ""))
        except FactMissing:
            return False
        return None if found == "none" else found == "busy"

    # ---- sysfs ------------------------------------------------------------------------------
    def sysfs_size(self, major: int, minor: int) -> int | None:
        try:
            return int(
                read_regular_text_bounded(self.root / "sys" / "dev" / "block" / f"{major}:{minor}" / "size").strip()
            )
        except (OSError, ValueError):
            return None


# ------------------------------------------------------------------------------------------
# the answers


def _sections(answer: bytes, mark: str) -> dict[str, bytes | None]:
    """Section name -> its bytes; None for what the node could not read."""
    head = mark.encode() + b" "
    sections: dict[str, bytes | None] = {}
    name: str | None = None
    parts: list[bytes] = []
    for line in answer.splitlines(keepends=True):
        if line.startswith(head):
            word = line[len(head) :].strip().decode("ascii", "replace")
            if word == "unreadable":
                if name is not None:
                    sections[name] = None
                name = None
                continue
            if name is not None and name not in sections:
                sections[name] = b"".join(parts)
            name, parts = word, []
        elif name is not None:
            parts.append(line)
    if name is not None and name not in sections:
        sections[name] = b"".join(parts)
    return sections


def _lay_out_sysfs(root: Path, text: str) -> None:
    """ROOT/sys/block/NAME[/PART]/{dev,size,...,holders/H -> the holder's dir},
    ROOT/sys/dev/block/MAJ:MIN and ROOT/sys/class/block/NAME -> the device's dir."""
    block = root / "sys" / "block"
    block.mkdir(parents=True)
    dirs: dict[str, Path] = {}  # "sda" / "sda/sda1" -> its dir
    holders: list[tuple[Path, str]] = []
    for line in text.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "D" and _safe_name(rest):
            dirs[rest] = block / rest
            dirs[rest].mkdir(exist_ok=True)
        elif kind == "P":
            disk, _, part = rest.partition(" ")
            if disk in dirs and _safe_name(part):
                dirs[f"{disk}/{part}"] = dirs[disk] / part
                dirs[f"{disk}/{part}"].mkdir(exist_ok=True)
        elif kind in ("F", "H"):
            key, _, value = rest.partition(" ")
            where = dirs.get(key)
            if where is None:
                continue
            if kind == "H":
                if _safe_name(value):
                    holders.append((where, value))
                continue
            fact, _, content = value.partition(" ")
            if fact in _SYSFS_FILES:
                path = where / fact
                path.parent.mkdir(exist_ok=True)
                path.write_text(content + "\n")
    for where, name in holders:
        (where / "holders").mkdir(exist_ok=True)
        target = block / name
        os.symlink(os.path.relpath(target, where / "holders"), where / "holders" / name)
    by_number = root / "sys" / "dev" / "block"
    by_number.mkdir(parents=True)
    by_name = root / "sys" / "class" / "block"
    by_name.mkdir(parents=True)
    for where in dirs.values():
        try:
            number = read_regular_text_bounded(where / "dev").strip()
        except OSError:
            continue
        if re.fullmatch(r"[0-9]+:[0-9]+", number) and not (by_number / number).exists():
            os.symlink(os.path.relpath(where, by_number), by_number / number)
        if not (by_name / where.name).exists():
            os.symlink(os.path.relpath(where, by_name), by_name / where.name)


_LS_ERROR_PID = re.compile(r"/proc/([0-9]+)/fd\b")


def _lay_out_fds(facts: NodeFacts, listing: str, errors: str) -> None:
    """ROOT/proc/PID/fd/N -> the link's text; the processes whose fds could not be listed."""
    proc = facts.root / "proc"
    pid: str | None = None
    for line in listing.splitlines():
        header = re.fullmatch(r"/proc/([0-9]+)/fd/?:", line)
        if header:
            pid = header.group(1)
            (proc / pid / "fd").mkdir(parents=True, exist_ok=True)
            continue
        if pid is None or " -> " not in line:
            continue  # "total 0", or a link ls could not read (the local guard skips it too)
        left, _, link = line.partition(" -> ")
        fd = left.rsplit(" ", 1)[-1]
        if not fd.isdigit() or not link:
            continue
        try:
            os.symlink(link, proc / pid / "fd" / fd)
        except OSError:
            continue
    for line in errors.splitlines():
        # A link ls could not read is skipped (as the local guard skips it); a directory it
        # could not open, or any error it names otherwise, makes that process unreadable.
        found = _LS_ERROR_PID.search(line)
        if found and "cannot read symbolic link" not in line and "No such file" not in line:
            facts.unreadable_pids.add(found.group(1))
            (proc / found.group(1)).mkdir(parents=True, exist_ok=True)
        elif found is None and line.strip():
            facts.note_unchecked(f"which processes hold files open (ls said: {line.strip()[:200]})")


_NS_LINK = re.compile(r"/proc/([0-9]+|self)/ns/mnt -> (mnt:\[[0-9]+\])$")


def _lay_out_namespaces(root: Path, sections: dict[str, bytes | None]) -> None:
    """ROOT/proc/PID/ns/mnt -> its namespace, and ROOT/proc/PID/mountinfo for the processes in
    another mount namespace than the login's (one mountinfo read per namespace): the mount
    table then finds the file-system type of their open files as it does here."""
    proc = root / "proc"
    namespace_of: dict[str, str] = {}
    for line in (sections.get("mntns") or b"").decode("utf-8", "replace").splitlines():
        found = _NS_LINK.search(line)
        if found:
            namespace_of[found.group(1)] = found.group(2)
    read_from: dict[str, str] = {}  # namespace -> the pid whose mountinfo we have
    for name, data in sections.items():
        kind, _, pid = name.partition(" ")
        if kind == "nsmountinfo" and pid.isdigit() and data and pid in namespace_of:
            (proc / pid).mkdir(parents=True, exist_ok=True)
            (proc / pid / "mountinfo").write_bytes(data)
            read_from[namespace_of[pid]] = pid
    for pid, namespace in namespace_of.items():
        if not (proc / pid).is_dir():
            continue  # a process whose fds were not listed: nothing of it is judged
        (proc / pid / "ns").mkdir(exist_ok=True)
        if not os.path.lexists(proc / pid / "ns" / "mnt"):
            os.symlink(namespace, proc / pid / "ns" / "mnt")
        source = read_from.get(namespace)
        # a process with a mountinfo of its own keeps it: "self" (the listing's own ls) has the
        # login's, laid out before, and may share a namespace read through another pid
        if source is not None and source != pid and not os.path.lexists(proc / pid / "mountinfo"):
            os.symlink(f"../{source}/mountinfo", proc / pid / "mountinfo")


def _lay_out_fdinfo(root: Path, text: str) -> None:
    """``head -n 3 /dev/null FILES`` output -> ROOT/proc/PID/fdinfo/N."""
    current: Path | None = None
    lines: list[str] = []

    def flush() -> None:
        # only the fdinfo of links to paths is ever read (for their mount's type)
        if current is not None and lines:
            try:
                wanted = os.readlink(current.parent.parent / "fd" / current.name).startswith("/")
            except OSError:
                wanted = False
            if wanted:
                current.parent.mkdir(exist_ok=True)
                current.write_text("".join(lines))

    for line in text.splitlines(keepends=True):
        header = re.fullmatch(r"==> /proc/([0-9]+)/fdinfo/([0-9]+) <==\n?", line)
        if header:
            flush()
            current, lines = root / "proc" / header.group(1) / "fdinfo" / header.group(2), []
        elif line.startswith("==> "):
            flush()
            current, lines = None, []
        elif current is not None and line.strip():
            lines.append(line)
    flush()


def _stat_answer(text: str) -> NodeStat | int:
    fields = text.split()
    if len(fields) == 6:
        try:
            mode, major, minor = int(fields[0], 16), int(fields[1], 16), int(fields[2], 16)
            return NodeStat(mode, os.makedev(major, minor), int(fields[3]), int(fields[4]), int(fields[5]))
        except ValueError:
            pass
    return _errno_of(text)


def _temp_parent() -> str:
    """Memory (/dev/shm) where it can be written: the layout is thousands of small files and
    links, 25 times faster to make and remove there than on a disk-backed /tmp (measured).
    Else the sticky /tmp, never $TMPDIR: the guard judges what this layout says, and in another
    user's directory they could rename it away and lay out a node of their own."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK | os.X_OK) else "/tmp"


class _Gatherer:
    """Runs the commands on one connection for one judgement; everything under a temp root."""

    def __init__(self, connection: Connection, node: str) -> None:
        self.connection = connection
        self.node = node
        self.mark = "racperf-" + secrets.token_hex(8)
        self.root = Path(tempfile.mkdtemp(prefix="racperf-node-facts-", dir=_temp_parent()))
        self.facts = NodeFacts(root=self.root, node=node)

    def _run(self, command: str, what: str, stdin: bytes | None = None) -> bytes | None:
        try:
            status, out, err = self.connection.run(
                command, stdin=stdin, timeout_s=COMMAND_TIMEOUT_S, limit=MAX_ANSWER_BYTES + 1
            )
        except (OSError, TimeoutError) as exc:
            self.facts.note_unchecked(f"{what} ({exc})")
            return None
        if len(out) > MAX_ANSWER_BYTES:
            self.facts.note_unchecked(f"{what} (the answer is larger than {MAX_ANSWER_BYTES >> 20} MB)")
            return None
        if status is None:
            self.facts.note_unchecked(f"{what} (the command ended without a status)")
            return None
        return out

    def base(self) -> None:
        out = self._run(f"sh -c {shlex.quote(BASE_SH)} racperf-facts {shlex.quote(self.mark)}", "the node's facts")
        if out is None:
            return
        sections = _sections(out, self.mark)
        if "end" not in sections:
            self.facts.note_unchecked("the node's facts (the answer was cut short)")
        proc = self.root / "proc"
        (proc / "self").mkdir(parents=True)
        pid_text = (sections.get("pid") or b"").decode("ascii", "replace").strip()
        if pid_text.isdigit():
            self.facts.own_pids = frozenset({pid_text})
        for name, path, what in (
            ("mountinfo", proc / "self" / "mountinfo", "the mounts (/proc/self/mountinfo)"),
            ("swaps", proc / "swaps", "the swap areas (/proc/swaps)"),
        ):
            data = sections.get(name)
            if data is None or (name == "mountinfo" and not data.strip()):
                self.facts.note_unchecked(what)
            else:
                path.write_bytes(data)
        sysfs = sections.get("sysfs")
        if sysfs is None:
            self.facts.note_unchecked("the block devices (/sys/block)")
        else:
            _lay_out_sysfs(self.root, sysfs.decode("utf-8", "surrogateescape"))
        listing = (sections.get("fds") or b"").decode("utf-8", "surrogateescape")
        errors = (sections.get("fderrors") or b"").decode("utf-8", "surrogateescape")
        _lay_out_fds(self.facts, listing, errors)
        if not any(proc.glob("[0-9]*/fd")):
            self.facts.note_unchecked("which processes hold files open (/proc/*/fd)")
        for line in (sections.get("comm") or b"").decode("utf-8", "replace").splitlines():
            pid, _, comm = line.partition(" ")
            if pid.isdigit() and (proc / pid).is_dir():
                (proc / pid / "comm").write_text(comm + "\n")
        _lay_out_fdinfo(self.root, (sections.get("fdinfo") or b"").decode("utf-8", "replace"))
        _lay_out_namespaces(self.root, sections)

    def answer(self, wanted: Iterable[tuple[str, str, str]]) -> None:
        """Gather the wanted facts: stats of open files in bulk, the rest one by one."""
        wanted = sorted(wanted)
        bulk = [path for kind, path, _ in wanted if kind == "stat" and _BULK_SAFE.match(path)]
        single = [key for key in wanted if not (key[0] == "stat" and _BULK_SAFE.match(key[1]))]
        if not bulk and not single:
            return
        words = [shlex.quote(word) for key in single for word in key]
        out = self._run(
            f"sh -c {shlex.quote(PATHS_SH)} racperf-facts {shlex.quote(self.mark)} " + " ".join(words),
            "the open files and the targets' paths and blocks",
            stdin="".join(f"{path}\n" for path in bulk).encode(),
        )
        if out is None:
            return
        bulk_head = f"{self.mark} bulk\n".encode()
        bulk_text, _, out = out.partition(f"{self.mark} r 0\n".encode()) if single else (out, b"", b"")
        if single:
            out = f"{self.mark} r 0\n".encode() + out
        for line in bulk_text.removeprefix(bulk_head).decode("utf-8", "replace").splitlines():
            name, _, rest = line.partition("|")
            if _BULK_SAFE.match(name):
                self.facts.answers[("stat", name, "")] = _stat_answer(rest)
        for path in bulk:  # no line: the fd was closed meanwhile
            self.facts.answers.setdefault(("stat", path, ""), errno.ENOENT)
        head = f"{self.mark} r ".encode()
        answers: dict[int, bytes] = {}
        index: int | None = None
        parts: list[bytes] = []
        for raw in out.splitlines(keepends=True):
            if raw.startswith(head) or raw.startswith(f"{self.mark} end".encode()):
                if index is not None:
                    answers[index] = b"".join(parts)
                number_text = raw[len(head) :].strip() if raw.startswith(head) else b""
                index, parts = (int(number_text) if number_text.isdigit() else None), []
            elif index is not None:
                parts.append(raw)
        for number, key in enumerate(single):
            if number in answers:
                self.facts.answers[key] = _decode(key[0], answers[number])

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


#: what a question the node left unanswered reads as (it also refuses: ``unchecked``); the
#: rest (stat, open, list) as EIO, a realpath as the path itself
_UNANSWERED: dict[str, object] = {"isdir": True, "lexists": True, "read": b"", "excl": "none"}


def _decode(kind: str, raw: bytes) -> object:
    text = raw.decode("utf-8", "surrogateescape")
    if kind == "stat":
        return _stat_answer(text)
    if kind == "realpath":
        return text[:-1] if text.endswith("\n") else text
    if kind in ("isdir", "lexists"):
        return text.strip() == "y"
    if kind == "list":
        first, _, names = text.partition("\n")
        return names.splitlines() if first == "ok" else errno.EACCES
    if kind == "open":
        return True if text.strip() == "ok" else _errno_of(text)
    if kind == "read":
        try:
            return bytes.fromhex(text.replace("\n", " "))
        except ValueError:
            return b""
    return text.strip()


def _on_node(connection: Connection, node: str, paths: Iterable[str], evaluate: Callable[[NodeFacts], T]) -> T:
    """``evaluate`` run against the node's facts until it asks for nothing new (module doc)."""
    gatherer = _Gatherer(connection, node)
    try:
        gatherer.base()
        facts = gatherer.facts
        # the targets' own facts come with the first questions
        for path in paths:
            facts.wanted |= {(kind, path, "") for kind in ("stat", "realpath", "lexists", "open")}
            facts.wanted.add(("read", path, HEAD_READ))
        for _ in range(MAX_ROUNDS):
            if facts.wanted:
                asked = set(facts.wanted)
                facts.wanted.clear()
                gatherer.answer(asked)
                for key in asked - facts.answers.keys():
                    facts.answers[key] = _UNANSWERED.get(key[0], errno.EIO) if key[0] != "realpath" else key[1]
                    facts.note_unchecked(f"{key[1]} ({key[0]}: the node gave no answer)")
            result = evaluate(facts)
            if not facts.wanted:
                return result
        for kind, path, _ in sorted(facts.wanted):
            facts.note_unchecked(f"{path} ({kind}: still unknown after {MAX_ROUNDS} rounds)")
        return evaluate(facts)
    finally:
        gatherer.close()


def gather_and_judge(
    connection: Connection, node: str, targets: Iterable[Target], override: bool | set[str] = False
) -> GuardVerdict:
    """The write guard's verdict on ``targets`` as node ``node`` sees them (see the module doc)."""
    targets = list(targets)
    return _on_node(
        connection,
        node,
        [t.path for t in targets],
        lambda facts: judge(targets, override, root=facts.root, system=facts, unchecked=facts.unchecked),
    )


def check_write_targets(connection: Connection, node: str, paths: Iterable[str]) -> list[SafetyVerdict]:
    """``check_write_target`` of each path on node ``node`` (``racperf check-target --ssh``):
    what the node would not give refuses a path that exists, as in :func:`gather_and_judge`."""
    paths = list(paths)

    def evaluate(facts: NodeFacts) -> list[SafetyVerdict]:
        verdicts = []
        for path in paths:
            verdict = check_write_target(path, root=facts.root, system=facts)
            if facts.unchecked and facts.lexists(path):
                verdict = replace(verdict, allowed=False, reasons=verdict.reasons + facts.unchecked)
            verdicts.append(verdict)
        return verdicts

    return _on_node(connection, node, paths, evaluate)
