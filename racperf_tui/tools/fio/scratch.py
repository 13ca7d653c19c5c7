"""fio's default target: racperf's private scratch directory and file, and the files a
read-only plan reads, laid out before the run.

The scratch directory is per user in a shared temp dir (see :func:`default_scratch_dir`), so
:func:`ensure_private_scratch` checks it is ours before anything is written there.
"""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING

from racperf_tui.core import units
from racperf_tui.core.guard.program_vetting import UntrustedPath, vet_path
from racperf_tui.core.textio.bounded_read import read_regular_text_bounded
from racperf_tui.tools.fio.plan import FioJob, FioPlan, job_paths

if TYPE_CHECKING:
    from racperf_tui.core.contract.hosts import Host


def _fs_type(path: str) -> str:
    """Filesystem type of the mount holding ``path`` ('' when unknown)."""
    try:
        mounts = read_regular_text_bounded("/proc/self/mounts").splitlines()
    except OSError:
        return ""
    real = os.path.realpath(path)
    best, best_type = "", ""
    for line in mounts:
        parts = line.split()
        if len(parts) < 3:
            continue
        mount_point = parts[1].replace("\\040", " ")
        if (real == mount_point or real.startswith(mount_point.rstrip("/") + "/")) and len(mount_point) >= len(best):
            best, best_type = mount_point, parts[2]
    return best_type


def default_scratch_dir() -> str:
    """Where the default scratch file lives: ``$TMPDIR/racperf-scratch-<uid>``.

    One directory per user (effective uid): root and oracle on the same DB node both run
    racperf, and a shared name would make the second one refused by
    :func:`ensure_private_scratch`. Not ``$XDG_RUNTIME_DIR``: that is a small tmpfs, where a
    256 MiB file may not fit and would measure RAM. For the same reason tmpfs/ramfs temp
    dirs are skipped when another one is writable (direct=1, O_DIRECT, also fails there on
    older kernels).
    """
    name = f"racperf-scratch-{os.geteuid()}"
    candidates = [os.environ.get("TMPDIR") or "", tempfile.gettempdir(), "/var/tmp", "/tmp"]
    usable = [c for c in dict.fromkeys(candidates) if c and os.path.isdir(c) and os.access(c, os.W_OK)]
    for candidate in usable:
        if _fs_type(candidate) not in ("tmpfs", "ramfs"):
            return os.path.join(candidate, name)
    return os.path.join(usable[0] if usable else tempfile.gettempdir(), name)


def default_scratch_target() -> str:
    """The default target: a scratch file in a temporary directory (created on launch)."""
    return os.path.join(default_scratch_dir(), "fio.scratch")


def in_scratch_dir(path: str) -> bool:
    """True for paths inside racperf's own scratch directory (nothing there to protect)."""
    scratch = os.path.realpath(default_scratch_dir())
    return os.path.realpath(os.path.dirname(os.path.abspath(path))) == scratch


def _lay_out(path: str, size: int, *, replace: bool = False) -> None:
    """Write ``size`` bytes of real (non-zero, not sparse) data to ``path`` atomically.

    The data goes to a new file of a random name (O_EXCL: never through a name someone planted)
    that is then linked as ``path``: a new path only (never replacing what appeared there since
    it was judged), unless ``replace`` (racperf's own scratch file, grown)."""
    chunk = os.urandom(1 << 20)
    fd, partial = tempfile.mkstemp(
        prefix=os.path.basename(path) + ".", suffix=".racperf-layout", dir=os.path.dirname(os.path.abspath(path))
    )
    try:
        try:
            remaining = size
            while remaining > 0:
                remaining -= os.write(fd, chunk[: min(len(chunk), remaining)])
            os.fsync(fd)
        finally:
            os.close(fd)
        if replace:
            os.replace(partial, path)
        else:
            os.link(partial, path)  # EEXIST if anything is there now
    finally:
        if os.path.lexists(partial):
            os.unlink(partial)


def read_layouts(fio_plan: FioPlan) -> list[tuple[str, int]]:
    """(absolute path, bytes) of every file a read-only plan reads that racperf may lay out
    (never under /dev); nothing for a plan that writes (fio lays those out itself)."""
    if fio_plan.writes:
        return []
    wanted_files: list[tuple[str, int]] = []
    for job in fio_plan.jobs:
        paths, _problems = job_paths(job, fio_plan.on_node)
        if not paths:
            continue
        filesize = units.maybe_size_bytes(str(job.options.get("filesize") or ""))
        total = units.maybe_size_bytes(str(job.options.get("size") or ""))
        wanted = filesize if filesize else (total // len(paths) if total else None)
        if not wanted or wanted <= 0:
            continue
        for path in paths:
            absolute = os.path.abspath(path)
            if absolute != "/dev" and not absolute.startswith("/dev/"):
                wanted_files.append((absolute, wanted))
    return wanted_files


def lay_out_read_targets(fio_plan: FioPlan) -> list[str]:
    """Lay out the files a read-only plan needs; return the paths written.

    fio lays out missing files by writing them, which ``--readonly`` forbids. So before a
    read-only run racperf writes the files that do not exist yet (a new file destroys
    nothing) and grows racperf's own scratch file. An existing user file is never written:
    if it is too short, fio says so. Real data, not a sparse file: reading holes would
    measure nothing. Paths under /dev are never created (the guard refused them already).
    """
    written: list[str] = []
    for absolute, wanted in read_layouts(fio_plan):
        kind = target_kind(absolute)
        ours = in_scratch_dir(absolute)
        parent = os.path.dirname(absolute)
        if kind == "missing" and (ours or os.path.isdir(parent)):
            os.makedirs(parent, exist_ok=True)
        elif not (kind == "file" and ours and os.path.getsize(absolute) < wanted):
            continue
        _lay_out(absolute, wanted, replace=kind == "file")
        written.append(absolute)
    return written


#: rw= values whose jobs read as well as write: fio lays their new files out with data
_MIXED_RW = frozenset({"rw", "readwrite", "randrw"})


@dataclass(frozen=True)
class WriteLayout:
    """A regular file a writing plan needs at ``size`` bytes; ``data``: a job also reads it
    (fio would write it whole first), else fio would only allocate it."""

    path: str
    size: int
    data: bool


def _per_clone_files(job: FioJob, paths: list[str]) -> int:
    numjobs = max(1, int(str(job.options.get("numjobs") or "1"), 0))
    if job.options.get("filename"):
        return max(1, len(paths))  # the clones share the named files
    return max(1, len(paths) // numjobs)


def write_layouts(fio_plan: FioPlan) -> list[WriteLayout]:
    """Every regular file (not under /dev) a plan that writes opens, at the size fio would
    extend it to (``offset`` + ``filesize``, or ``offset`` + ``size`` over the clone's
    files): when fio finds a file shorter it unlinks and re-creates it, which the jail's
    read-only mounts refuse (the file is bound writable, not its directory). A size racperf
    cannot compute (a percentage, a range) is left to fio."""
    if not fio_plan.writes:
        return []
    wanted: dict[str, WriteLayout] = {}
    for job in fio_plan.jobs:
        paths, _problems = job_paths(job, fio_plan.on_node)
        if not paths:
            continue
        try:
            per_clone = _per_clone_files(job, paths)
        except ValueError:
            continue
        filesize = units.maybe_size_bytes(str(job.options.get("filesize") or ""))
        total = units.maybe_size_bytes(str(job.options.get("size") or ""))
        size = filesize if filesize else (total // per_clone if total else None)
        offset_text = str(job.options.get("offset") or "0")
        offset = units.maybe_size_bytes(offset_text) if offset_text != "0" else 0
        if not size or size <= 0 or offset is None:
            continue
        for path in paths:
            absolute = os.path.abspath(path)
            if absolute == "/dev" or absolute.startswith("/dev/"):
                continue
            before = wanted.get(absolute)
            layout = WriteLayout(absolute, offset + size, job.rw in _MIXED_RW)
            if before is not None:
                layout = WriteLayout(absolute, max(before.size, layout.size), before.data or layout.data)
            wanted[absolute] = layout
    return list(wanted.values())


def _allocate_new(path: str, size: int) -> None:
    """A new file of ``size`` allocated bytes at ``path`` (never through a name someone
    planted: made under a random name, then linked; EEXIST if anything is there now)."""
    fd, partial = tempfile.mkstemp(
        prefix=os.path.basename(path) + ".", suffix=".racperf-layout", dir=os.path.dirname(path)
    )
    try:
        try:
            os.fchmod(fd, 0o644 & ~_umask())
            os.posix_fallocate(fd, 0, size)
        finally:
            os.close(fd)
        os.link(partial, path)
    finally:
        if os.path.lexists(partial):
            os.unlink(partial)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _extend(path: str, size: int, data: bool) -> None:
    """An existing regular file the guard cleared for writing, grown in place to ``size``
    (with data when a job reads it), so fio finds it long enough and writes it where it is."""
    fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        have = os.fstat(fd).st_size
        if not data:
            os.posix_fallocate(fd, have, size - have)
            return
        chunk = os.urandom(1 << 20)
        while have < size:
            have += os.pwrite(fd, chunk[: min(len(chunk), size - have)], have)
    finally:
        os.close(fd)


def _nobody_else_can_swap(path: str) -> bool:
    """Whether no other user can replace ``path`` (or a directory on its way) before racperf
    grows it outside the jail: the program vetting's walk (core/guard/program_vetting.py). In
    another user's directory a short target is left for fio to grow inside the jail, which
    binds only the file the guard judged."""
    try:
        vet_path(os.path.abspath(path), "fio's layout")
    except (UntrustedPath, OSError):
        return False
    return True


def lay_out_write_targets(fio_plan: FioPlan) -> list[str]:
    """Before a plan that writes: each file target missing or too short laid out as fio would
    lay it out (parent directories 0700 as fio makes them; allocated, or written with real
    data when a job also reads it), so fio writes the files in place and never unlinks one.
    Returns the paths laid out."""
    done: list[str] = []
    for layout in write_layouts(fio_plan):
        kind = target_kind(layout.path)
        if kind == "missing" and not os.path.lexists(layout.path):
            os.makedirs(os.path.dirname(layout.path), mode=0o700, exist_ok=True)
            if layout.data:
                _lay_out(layout.path, layout.size)
            else:
                _allocate_new(layout.path, layout.size)
        elif kind == "file" and os.path.getsize(layout.path) < layout.size and _nobody_else_can_swap(layout.path):
            _extend(os.path.realpath(layout.path), layout.size, layout.data)
        else:
            continue
        done.append(layout.path)
    return done


#: :func:`lay_out_read_targets` on a node, in sh: $1 the path, $2 its bytes, $3 1 when it is
#: in racperf's scratch dir. The same rules: a missing file is written to a new name (noclobber)
#: and linked (EEXIST if anything appeared there), racperf's own short scratch file replaced,
#: anything else left alone; real data from /dev/urandom. Prints "laid-out" when it wrote.
REMOTE_LAYOUT_SH = r"""
p=$1 size=$2 ours=$3
parent=$(dirname -- "$p")
if [ ! -e "$p" ] && [ ! -L "$p" ]; then
  if [ "$ours" = 1 ]; then mkdir -p -- "$parent" || exit 1; fi
  [ -d "$parent" ] || exit 0
  replace=0
elif [ "$ours" = 1 ] && [ -f "$p" ] && [ ! -L "$p" ] && [ "$(wc -c < "$p")" -lt "$size" ]; then
  replace=1
else
  exit 0
fi
t="$p.$$.racperf-layout"
( umask 077; set -C; : > "$t" ) || exit 1
head -c "$size" /dev/urandom >> "$t" || { rm -f -- "$t"; exit 1; }
if [ "$replace" = 1 ]; then
  mv -f -- "$t" "$p" || { rm -f -- "$t"; exit 1; }
else
  ln -- "$t" "$p"; rc=$?; rm -f -- "$t"; [ "$rc" = 0 ] || exit 1
fi
echo laid-out
"""
#: seconds a node may take to lay out one file (256 MiB of urandom on a slow node)
REMOTE_LAYOUT_TIMEOUT_S = 600.0


def lay_out_read_targets_on(host: Host, fio_plan: FioPlan) -> list[str]:
    """:func:`lay_out_read_targets` on the run's node (``host``); ValueError names the file
    and the node when one cannot be laid out."""
    scratch = default_scratch_dir()
    written: list[str] = []
    for absolute, wanted in read_layouts(fio_plan):
        ours = "1" if os.path.dirname(absolute) == scratch else "0"
        if _lay_out_on(host, REMOTE_LAYOUT_SH, absolute, [str(wanted), ours]):
            written.append(absolute)
    return written


def _lay_out_on(host: Host, script: str, path: str, words: list[str]) -> bool:
    """``script`` run on ``host`` for ``path``: whether it laid the file out; ValueError names
    the file and the node when it could not."""
    try:
        answer = host.run_briefly(["sh", "-c", script, "racperf-layout", path, *words], REMOTE_LAYOUT_TIMEOUT_S)
    except OSError as exc:
        raise ValueError(f"target: cannot lay out {path} on {host.name}: {exc}") from None
    if answer.returncode != 0:
        raise ValueError(f"target: cannot lay out {path} on {host.name}: {answer.text.strip() or answer.returncode}")
    return "laid-out" in answer.stdout


#: :func:`lay_out_write_targets` on a node, in sh: $1 the path, $2 its bytes, $3 1 when a job
#: also reads it (real data from /dev/urandom), else allocated (fallocate where it exists).
#: A missing file is made (parents 0700, as fio makes them); a short regular file is grown in
#: place; anything else is left alone. Prints "laid-out" when it wrote.
REMOTE_WRITE_LAYOUT_SH = r"""
p=$1 size=$2 data=$3
if [ -L "$p" ]; then p=$(readlink -f -- "$p") || exit 1; fi
if [ ! -e "$p" ]; then
  (umask 077; mkdir -p -- "$(dirname -- "$p")") || exit 1
  (umask 022; set -C; : > "$p") || exit 1
elif [ ! -f "$p" ]; then
  exit 0
fi
have=$(wc -c < "$p") || exit 1
[ "$have" -lt "$size" ] || exit 0
if [ "$data" = 0 ] && command -v fallocate >/dev/null 2>&1 &&
  fallocate -o "$have" -l "$((size - have))" -- "$p" 2>/dev/null; then
  echo laid-out; exit 0
fi
head -c "$((size - have))" /dev/urandom >> "$p" || exit 1
echo laid-out
"""


def lay_out_write_targets_on(host: Host, fio_plan: FioPlan) -> list[str]:
    """:func:`lay_out_write_targets` on the run's node (``host``); ValueError names the file
    and the node when one cannot be laid out."""
    done: list[str] = []
    for layout in write_layouts(fio_plan):
        if _lay_out_on(host, REMOTE_WRITE_LAYOUT_SH, layout.path, [str(layout.size), "1" if layout.data else "0"]):
            done.append(layout.path)
    return done


def target_kind(target: str) -> str:
    """'block', 'file', 'directory', 'missing' or 'other' for a target path."""
    if not target:
        return "missing"
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return "missing"
    except OSError:
        return "other"
    if stat.S_ISBLK(st.st_mode):
        return "block"
    if stat.S_ISDIR(st.st_mode):
        return "directory"
    if stat.S_ISREG(st.st_mode):
        return "file"
    return "other"


def ensure_private_scratch(scratch_dir: str, target: str) -> None:
    """Create racperf's scratch directory (mode 0700), or check that the one there is ours.

    It lives in a shared temp dir under a per-uid, hence guessable, name: another local user
    could create it first, or put a symlink named like the scratch file there pointing at a
    datafile, and racperf's write presets (exempt from the write guard inside the scratch
    dir) would write through it. So the directory must be a real directory owned by us and
    writable by nobody else, and the scratch file, when it exists, a regular file of ours.
    ValueError says what is wrong.
    """
    try:
        os.mkdir(scratch_dir, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise ValueError(f"target: cannot create racperf's scratch directory {scratch_dir}: {exc.strerror}") from None
    advice = (
        "racperf writes there only when it is its own; remove it, or set TMPDIR to a "
        "directory of yours, or give a target of your own"
    )
    info = os.lstat(scratch_dir)
    if stat.S_ISLNK(info.st_mode):
        raise ValueError(f"target: racperf's scratch directory {scratch_dir} is a symbolic link; {advice}")
    if not stat.S_ISDIR(info.st_mode):
        raise ValueError(f"target: racperf's scratch directory {scratch_dir} is not a directory; {advice}")
    if info.st_uid != os.geteuid():
        raise ValueError(
            f"target: racperf's scratch directory {scratch_dir} belongs to uid "
            f"{info.st_uid}, not to you (uid {os.geteuid()}); {advice}"
        )
    if info.st_mode & 0o022:
        raise ValueError(
            f"target: racperf's scratch directory {scratch_dir} is writable by other "
            f"users (mode {stat.S_IMODE(info.st_mode):o}); {advice}"
        )
    try:
        file_info = os.lstat(target)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(file_info.st_mode) or not stat.S_ISREG(file_info.st_mode):
        raise ValueError(
            f"target: the scratch file {target} is not a regular file (a symbolic link or a device); {advice}"
        )
    if file_info.st_uid != os.geteuid():
        raise ValueError(f"target: the scratch file {target} belongs to uid {file_info.st_uid}; {advice}")


#: :func:`ensure_private_scratch` on a node, in sh: $1 the directory, $2 the scratch file.
#: Exit 3: the directory is not racperf's own (the reason on stdout); 4: the file is not.
REMOTE_SCRATCH_SH = r"""
d=$1 f=$2
mkdir -m 700 -- "$d" 2>/dev/null
if [ -L "$d" ]; then echo "is a symbolic link"; exit 3; fi
if [ ! -d "$d" ]; then echo "is not a directory (or cannot be created)"; exit 3; fi
if [ ! -O "$d" ]; then echo "does not belong to you ($(id -un))"; exit 3; fi
case $(ls -ld -- "$d" 2>/dev/null) in d????w*|d???????w*) echo "is writable by other users"; exit 3 ;; esac
if [ -L "$f" ] || { [ -e "$f" ] && [ ! -f "$f" ]; }; then
  echo "is not a regular file (a symbolic link or a device)"; exit 4
fi
if [ -e "$f" ] && [ ! -O "$f" ]; then echo "does not belong to you ($(id -un))"; exit 4; fi
exit 0
"""


def ensure_private_scratch_on(host: Host, scratch_dir: str, target: str) -> None:
    """:func:`ensure_private_scratch` on the run's node (``host``): the same checks, in sh
    there. ValueError says what is wrong, and where."""
    advice = (
        "racperf writes there only when it is its own; remove it, or set TMPDIR to a "
        "directory of yours, or give a target of your own"
    )
    try:
        answer = host.run_briefly(["sh", "-c", REMOTE_SCRATCH_SH, "racperf-scratch", scratch_dir, target], 30.0)
    except OSError as exc:
        raise ValueError(
            f"target: cannot check racperf's scratch directory {scratch_dir} on {host.name}: {exc}"
        ) from None
    reason = answer.stdout.strip() or answer.stderr.strip()
    if answer.returncode == 3:
        raise ValueError(f"target: racperf's scratch directory {scratch_dir} on {host.name} {reason}; {advice}")
    if answer.returncode == 4:
        raise ValueError(f"target: the scratch file {target} on {host.name} {reason}; {advice}")
    if answer.returncode != 0:
        raise ValueError(f"target: cannot check racperf's scratch directory {scratch_dir} on {host.name}: {reason}")
