"""The kernel's net on another node: the device jail and the write watch, in POSIX sh.

The SSH host (core/remote/ssh_host.py) wraps a run that has targets in :data:`NET_SH` (with
:func:`net_command`), inside its watchdog. On the node, with nothing of racperf installed:

* **the cleared devices** are read there first: ``stat -L`` of each of the run's target paths
  that is a block device gives its major:minor as the node numbers it;
* **the write watch**: a background loop, every :data:`WATCH_INTERVAL_S`, lists the command's
  process tree (``ps -e -o pid= -o ppid=``, the descendants of the command's pid, so fio's
  workers that left the group with setsid() are in it), reads each process's open files with
  ``ls -l /proc/PID/fd/`` (a magic link's permission bits are its open mode: ``l-wx`` and
  ``lrwx`` are open for writing), stats each one open for writing (``stat -L``, bounded by
  ``timeout`` where it exists) and, at the first block device whose number was not cleared,
  prints ``MARK violation PID FD MAJ:MIN PATH`` and ``MARK comm COMM`` on stderr and SIGKILLs the whole tree;
* **the jail**: where the login is root and util-linux ``unshare`` exists, the command runs in
  a private mount namespace (``unshare -m``) where every mount is remounted read-only and nodev
  (one by one, from mountinfo), /dev is a fresh read-only tmpfs holding null, zero, full,
  random, urandom and the cleared device nodes at their paths, and only the run's write targets
  that are files and its directory are bound writable again (as core/guard/devjail.py builds
  it here, without Landlock: sh cannot make its syscalls). Without root or unshare the command
  runs without a jail and ``MARK net`` on stderr says why; a jail that fails to build runs
  nothing (exit 125).

:class:`NetReport` reads those lines from the command's stderr: the violations become the
process's ``violations`` (the supervisor kills and records them as for a local run), the jail's
state a sentence for the run's record.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from racperf_tui.core.guard.write_watch import Violation

#: seconds between two looks of the node's write watch (each costs a ps, an awk, an ls per
#: process and a stat per fd open for writing)
WATCH_INTERVAL_S = 0.5

#: what the node's net lacks wherever it runs: it is sh, and Landlock is a syscall
NO_LANDLOCK_ON_NODES = (
    "Landlock not active on the node: the node's net is POSIX sh, which cannot make the Landlock syscalls"
)

#: $1 mark, $2 interval, $3 the command line (one shell word), then the cleared target paths,
#: "--", and the paths the run may write (its write targets, its directory).
NET_SH = r"""
m=$1 iv=$2 cmd=$3; shift 3
export LC_ALL=C
cl=" "
for p in "$@"; do
  [ "$p" = -- ] && break
  n=$(stat -L -c '%F|%t:%T' -- "$p" 2>/dev/null) || continue
  case $n in "block special file|"*) cl="$cl${n#*|} ";; esac
done
to=
if command -v timeout >/dev/null 2>&1; then to="timeout -s KILL 2"; fi
top=$$
tree() {
  ps -e -o pid= -o ppid= 2>/dev/null | awk -v top="$top" '
    { parent[$1] = $2; pids[NR] = $1 }
    END {
      want[top] = 1; printf "%s\n", top; more = 1
      while (more) { more = 0
        for (i = 1; i <= NR; i++) { p = pids[i]
          if (!(p in want) && (parent[p] in want)) { want[p] = 1; printf "%s\n", p; more = 1 } } }
    }'
}
# one look: the tree's fds open for writing whose link is a path (ls -l's mode column is the
# open mode), stat'ed in one go; the first block device not cleared, as "PATH|MAJ:MIN"
look() {
  ls -l /dev/null $(for p in $(tree); do printf '/proc/%s/fd/ ' "$p"; done) 2>/dev/null | awk '
    /^\/proc\/[0-9]+\/fd\/?:$/ { split($0, part, "/"); pid = part[3]; next }
    pid != "" && $1 ~ /^l.w/ && $10 == "->" && substr($11, 1, 1) == "/" { print "/proc/" pid "/fd/" $9 }' |
    xargs $to stat -L -c '%n|%F|%t:%T' 2>/dev/null | awk -F'|' -v cl="$cl" '
    $2 == "block special file" && index(cl, " " $3 " ") == 0 { print $1 "|" $3; exit }'
}
# twice forked, so the watch is no process of the tree it kills
( (
  trap '' INT HUP PIPE
  while kill -0 "$top" 2>/dev/null; do
    sleep "$iv"
    v=$(look)
    [ -n "$v" ] || continue
    f=${v%|*}; pid=${f#/proc/}; pid=${pid%%/*}
    l=$(readlink "$f" 2>/dev/null); c=; read -r c < "/proc/$pid/comm" 2>/dev/null
    kill -s KILL $(tree) 2>/dev/null
    printf '%s violation %s %s %s %s\n%s comm %s\n' "$m" "$pid" "${f##*/}" "${v##*|}" "${l:-?}" "$m" "${c:-?}" >&2
    exit 0
  done
) </dev/null >/dev/null & )
JAIL=$(cat <<'EOF'
m=$1 cmd=$2; shift 2
fail() { printf 'racperf devjail: not running the command: %s\n' "$1" >&2; exit 125; }
specs= rw= elsewhere= writing= pinned=
for p in /dev/null /dev/zero /dev/full /dev/random /dev/urandom "$@"; do
  if [ "$p" = -- ]; then writing=1; continue; fi
  if [ -n "$writing" ]; then
    case $p in @*)
      # @DEV:INO:PATH, a file the guard judged: bound by a descriptor of that very file below
      x=${p#@}; d=${x%%:*}; x=${x#*:}; i=${x%%:*}; pinned="$pinned$d $i ${x#*:}
"
      continue;;
    esac
    # a path the run writes: a device is reached through the jail's /dev, anything else is
    # bound writable at its real path (made first if missing, as fio makes it)
    case $p in /dev/*) continue;; esac
    case $p in */) (umask 077; mkdir -p -- "$p") || fail "$p: cannot be made";; esac
    r=$(readlink -f -- "$p" 2>/dev/null) || r=$p
    if [ -b "$r" ] || [ -c "$r" ]; then continue; fi
    if [ ! -e "$r" ]; then
      (umask 077; mkdir -p -- "${r%/*}") && (umask 022; : >> "$r") || fail "$p: cannot be made"
    fi
    rw="$rw$r
"
    continue
  fi
  case $p in
    /dev/*) ;;
    *) r=$(readlink -f -- "$p" 2>/dev/null) || continue
       case $r in /dev/*) ;; *) { [ -b "$r" ] || [ -c "$r" ]; } && elsewhere="$elsewhere$r
";; esac
       continue;;
  esac
  s=$(stat -L -c '%F|%t|%T|%a|%u|%g' -- "$p" 2>/dev/null) || fail "$p: cannot be examined"
  case $s in "block special file|"*) k=b;; "character special file|"*) k=c;; *) continue;; esac
  specs="$specs$k|${s#*|}|$p
"
done
mount --make-rprivate / 2>/dev/null || fail "cannot make the mounts private"
# every mount read-only and nodev (as systemd's ProtectSystem=strict), its nosuid and noexec
# kept; mountinfo writes a space in a mount point as \040, which printf %b reads as \0040
minfo=$(cat /proc/self/mountinfo) || fail "cannot read /proc/self/mountinfo"
exec 9>/dev/null  # opened before the host's /dev turns nodev under us
bad=$(printf '%s\n' "$minfo" | while read -r _ _ _ _ mp opts _; do
  mp=$(printf '%b' "$(printf '%s' "$mp" | sed 's/\\\([0-7][0-7][0-7]\)/\\0\1/g')")
  o=remount,bind,ro,nodev
  case ,$opts, in *,nosuid,*) o=$o,nosuid;; esac
  case ,$opts, in *,noexec,*) o=$o,noexec;; esac
  mount -o "$o" -- "$mp" 2>&9 || [ ! -e "$mp" ] || { printf '%s' "$mp"; break; }
done)
[ -z "$bad" ] || fail "cannot make $bad read-only"
umount -l /dev 2>&9
exec 9>&-
mount -t tmpfs -o mode=755,nosuid,noexec racperf-devjail /dev || fail "cannot mount a tmpfs on /dev"
printf '%s' "$specs" | while IFS='|' read -r k ma mi mo u g p; do
  mkdir -p -- "${p%/*}" && mknod -m 600 -- "$p" "$k" "0x$ma" "0x$mi" &&
    chown "$u:$g" -- "$p" && chmod "$mo" -- "$p" || exit 1
done || fail "cannot make the device nodes"
ln -s /proc/self/fd /dev/fd && ln -s /proc/self/fd/0 /dev/stdin && ln -s /proc/self/fd/1 /dev/stdout &&
  ln -s /proc/self/fd/2 /dev/stderr && mkdir /dev/shm || fail "cannot populate /dev"
mount -t tmpfs -o mode=1777,nosuid,nodev racperf-devjail-shm /dev/shm || fail "cannot mount /dev/shm"
mount -o remount,ro,nosuid,noexec /dev || fail "cannot make /dev read-only"
printf '%s' "$rw" | while IFS= read -r r; do
  [ -n "$r" ] || continue
  mount --bind -- "$r" "$r" && mount -o remount,bind,rw,nodev,nosuid -- "$r" || exit 1
done || fail "cannot make the run's files writable"
# each judged file opened (links followed, as the benchmark opens it), refused unless it is the
# file the guard judged, and that descriptor bound (-c: mount must not turn /proc/self/fd/8 back
# into a path); a FIFO, which an open would wait on, is bound by its path
bad=$(printf '%s' "$pinned" | while read -r d i p; do
  [ -n "$p" ] || continue
  if [ -p "$p" ]; then
    mount --bind -- "$p" "$p" && mount -o remount,bind,rw,nodev,nosuid -- "$p" ||
      { printf 'cannot bind %s' "$p"; break; }
    continue
  fi
  exec 8<"$p" || { printf '%s cannot be opened' "$p"; break; }
  [ "$(stat -L -c '%d %i' /proc/self/fd/8 2>/dev/null)" = "$d $i" ] ||
    { printf '%s is no longer the file the write guard judged (another file or a link took its place)' "$p"
      break; }
  mount -c --bind /proc/self/fd/8 "$p" && mount -c -o remount,bind,rw,nodev,nosuid "$p" ||
    { printf 'cannot bind %s' "$p"; break; }
  exec 8<&-
done)
[ -z "$bad" ] || fail "$bad"
printf '%s' "$elsewhere" | while IFS= read -r r; do
  [ -n "$r" ] || continue
  mount --bind -- "$r" "$r" && mount -o remount,bind,ro,nosuid -- "$r" || exit 1
done || fail "cannot bind the cleared device nodes outside /dev"
# the working directory, entered again by its path, is the writable bind on top (if it is one)
cd -- "$(pwd)" 2>/dev/null || true
exec sh -c "$cmd"
EOF
)
if [ "$(id -u)" != 0 ]; then
  printf '%s net watch; no jail: the device jail needs root\n' "$m" >&2
elif ! command -v unshare >/dev/null 2>&1; then
  printf '%s net watch; no jail: no unshare (util-linux) on the node\n' "$m" >&2
else
  printf '%s net watch; jail\n' "$m" >&2
  exec unshare -m sh -c "$JAIL" racperf-jail "$m" "$cmd" "$@"
fi
exec sh -c "$cmd"
"""


def net_command(
    command: str,
    mark: str,
    cleared_paths: Iterable[str],
    writable: Iterable[str] = (),
    *,
    interval_s: float = WATCH_INTERVAL_S,
) -> str:
    """``command`` (a shell line) under the node's write watch and jail: ``cleared_paths`` the
    run's targets, ``writable`` what it may write (its write targets, its directory)."""
    words = ["sh", "-c", NET_SH, "racperf-net", mark, f"{interval_s:g}", command, *cleared_paths, "--", *writable]
    return " ".join(shlex.quote(word) for word in words)


@dataclass
class NetReport:
    """What the node's net said on the command's stderr (lines starting with the mark)."""

    mark: str
    violations: list[Violation] = field(default_factory=list)
    protections: list[str] = field(default_factory=list)
    _partial: bytes = b""

    def feed(self, chunk: bytes) -> None:
        data = self._partial + chunk
        lines = data.split(b"\n")
        self._partial = lines.pop()[-4096:]
        head = f"{self.mark} ".encode()
        for raw in lines:
            if not raw.startswith(head):
                continue
            kind, _, rest = raw[len(head) :].decode("utf-8", "replace").partition(" ")
            if kind == "net":
                watch, _, jail = rest.partition("; ")
                self.protections = ["write watch on the node (every process of the run, by device number)"]
                if jail == "jail":
                    self.protections += [
                        "device jail on the node: /dev holds only the cleared devices",
                        "read-only mounts on the node: every mount read-only and nodev; writable: the run's "
                        "write targets and its directory",
                    ]
                else:
                    why = jail.removeprefix("no jail: ")
                    self.protections += [
                        f"device jail not active on the node: {why}",
                        f"read-only mounts not active on the node: {why}",
                    ]
                self.protections.append(NO_LANDLOCK_ON_NODES)
            elif kind == "violation":
                fields = rest.split(" ", 3)
                if len(fields) < 4 or not fields[0].isdigit() or not fields[1].isdigit():
                    continue
                major, _, minor = fields[2].partition(":")
                try:
                    numbers = (int(major, 16), int(minor, 16))
                except ValueError:
                    continue
                self.violations.append(Violation(int(fields[0]), "?", int(fields[1]), fields[3], *numbers))
            elif kind == "comm" and self.violations and self.violations[-1].comm == "?":
                self.violations[-1] = replace(self.violations[-1], comm=rest or "?")
