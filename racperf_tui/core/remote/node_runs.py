"""racperf's runs on another node, found on the node itself (``racperf runs list/stop --node``).

A run's command on a node runs under the watchdog of core/remote/ssh_host.py, a ``sh`` whose argv
is ``sh -c WATCHDOG_SH racperf-watchdog MARK GRACE LIMIT COMMAND DEADLINE``; its mark is
``racperf-RUN-TOKEN``, RUN the run's remote directory name ``HOST-HASH-ID`` (the racperf host,
a hash of its data dir's runs directory, the run id: core/ssh_host.remote_run_prefix), and
its run directories are ``~/.racperf/runs/RUN``. So the node says which runs of which store
still run there, even when the store here lost track of them (its supervisor gone, the data
dir moved or lost), and a run is stopped there as its watchdog stops it: TERM to its group
and every process the watchdog tracked (``$TMPDIR/MARK.PID/list``: pid and start time, so a pid
reused meanwhile is never signalled), KILL to what is left after the grace.

One sh command each (``grep -l`` over /proc/*/cmdline, no walk of every process in sh).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from racperf_tui.core.remote.ssh import Connection
from racperf_tui.core.remote.ssh_host import q

WATCHDOG_NAME = "racperf-watchdog"
#: ``racperf-RUN-TOKEN``; RUN ends with the run id; TOKEN 12 hex digits (older marks: no RUN)
_MARK = re.compile(r"^racperf-(?:(?P<run>.+-(?P<id>\d+))-)?(?P<token>[0-9a-f]{12})$")

#: $1 the runs' base directory. Lines: "clock HZ UPTIME", "proc PID PPID START ARGV" (argv's
#: NULs as \001) for every process of this user (real and effective uid: any user can start
#: a process whose argv looks like a watchdog) whose argv names the watchdog, "dir MTIME NAME"
#: for each run directory.
LIST_SH = r"""
base=$1 me=$(id -u)
mine() {
  k=; a=; b=
  while read -r k a b rest; do [ "$k" = Uid: ] && break; done 2>/dev/null < "$1/status"
  [ "$k" = Uid: ] && [ "$a" = "$me" ] && [ "$b" = "$me" ]
}
printf 'clock %s %s\n' "$(getconf CLK_TCK 2>/dev/null || echo 100)" "$(cut -d' ' -f1 /proc/uptime 2>/dev/null)"
for f in $(grep -l racperf-watchdog /proc/[0-9]*/cmdline 2>/dev/null); do
  d=${f%/cmdline}
  mine "$d" || continue
  s=; read -r s 2>/dev/null < "$d/stat" || continue
  s=${s##*) }; set -- $s
  [ "$1" = Z ] && continue
  printf 'proc %s %s %s ' "${d#/proc/}" "$2" "${20}"
  tr '\000\n' '\001 ' < "$f" 2>/dev/null
  printf '\n'
done
if [ -d "$base" ]; then
  for d in "$base"/*; do
    [ -d "$d" ] || continue
    printf 'dir %s %s\n' "$(date -r "$d" +%s 2>/dev/null || echo 0)" "${d##*/}"
  done
fi
true
"""

#: $1 the watchdog's pid, $2 its mark, $3 grace (s). Nothing unless the process is still the
#: watchdog of that mark (its argv; the pid may be reused since the listing) and this
#: user's (real and effective uid) and its tracker file too (another user can write
#: /tmp/MARK.PID: its first word was the group signalled, 1 meant every process). TERM to the
#: run's group and every tracked process, KILL after the grace to what is left. Lines: "term N" (processes
#: signalled), then "gone" or "killed N".
STOP_SH = r"""
w=$1 mark=$2 grace=$3
td=${TMPDIR:-/tmp}/$mark.$w t=${TMPDIR:-/tmp}/$mark.$w/list
started() {
  s=; read -r s 2>/dev/null < "/proc/$1/stat" || return 1
  s=${s##*) }; set -- $s
  [ "$1" != Z ] && st=${20}
}
me=$(id -u)
k=; a=; b=
while read -r k a b rest; do [ "$k" = Uid: ] && break; done 2>/dev/null < "/proc/$w/status"
if [ "$k" != Uid: ] || [ "$a" != "$me" ] || [ "$b" != "$me" ]; then
  echo "process $w is not a watchdog of this user's" >&2; exit 1
fi
# the pid may have been reused since the listing: only the watchdog of this mark is stopped
n=$(tr '\000' '\n' < "/proc/$w/cmdline" 2>/dev/null | grep -cxF -e racperf-watchdog -e "$mark")
if [ "${n:-0}" -lt 2 ]; then echo "term 0"; echo gone; exit 0; fi
list=
if [ -d "$td" ] && [ ! -h "$td" ] && [ -O "$td" ] && [ -f "$t" ] && [ ! -h "$t" ] && [ -O "$t" ]; then
  read -r list 2>/dev/null < "$t"
fi
pg=${list%%:*}
case $pg in ''|*[!0-9]*|0|1) pg= ;; esac
if [ -z "$pg" ]; then
  pg=$(ps -e -o pid= -o ppid= -o pgid= 2>/dev/null | awk -v w="$w" '$2 == w && $1 == $3 { print $1; exit }')
fi
sigall() {
  n=0
  if [ -n "$pg" ] && kill -s "$1" -- "-$pg" 2>/dev/null; then n=1; fi
  for e in $list; do
    p=${e%%:*}
    if started "$p" && [ "$st" = "${e#*:}" ]; then kill -s "$1" "$p" 2>/dev/null && n=$((n+1)); fi
  done
}
anyalive() {
  if [ -n "$pg" ] && kill -s 0 -- "-$pg" 2>/dev/null; then return 0; fi
  for e in $list; do
    p=${e%%:*}
    if started "$p" && [ "$st" = "${e#*:}" ]; then return 0; fi
  done
  return 1
}
sigall TERM
echo "term $n"
i=0
while [ "$i" -lt "$grace" ] && anyalive; do sleep 0.2 2>/dev/null || sleep 1; i=$((i+1)); done
if anyalive; then sigall KILL; echo "killed $n"; else echo gone; fi
"""


@dataclass(frozen=True)
class NodeRun:
    """A run racperf left on the node: its directory, and its watchdog when it still runs."""

    name: str  # the run's remote directory name (HOST-HASH-ID), or the mark of an older run
    run_id: int | None  # the id in the store the name's prefix says
    running: bool
    pid: int | None = None  # the watchdog's
    mark: str = ""
    elapsed_s: float | None = None
    command: str = ""  # the command line the watchdog runs
    directory_mtime: float | None = None

    def of_store(self, prefix: str) -> bool:
        """Is it a run of the store whose remote directories begin with ``prefix``?"""
        return self.name.startswith(prefix) and self.name[len(prefix) :].isdigit()


def _parse_mark(mark: str) -> tuple[str, int | None]:
    match = _MARK.match(mark)
    if match is None or match["run"] is None:
        return mark, None
    return match["run"], int(match["id"])


def parse_listing(text: str) -> list[NodeRun]:
    """The runs in LIST_SH's output: those running (their watchdog: the one of the processes
    sharing its argv, forked subshells, whose parent is none of them), then the directories
    of those that do not run any more, by name."""
    hz, uptime = 100.0, None
    procs: dict[int, tuple[int, int, list[str]]] = {}
    dirs: dict[str, float] = {}
    for line in text.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "clock":
            parts = rest.split()
            try:
                hz = float(parts[0]) or 100.0
                uptime = float(parts[1]) if len(parts) > 1 else None
            except (ValueError, IndexError):
                pass
        elif kind == "proc":
            fields = rest.split(" ", 3)
            if len(fields) < 4 or not all(f.isdigit() for f in fields[:3]):
                continue
            argv = fields[3].split("\x01")
            # sh -c SCRIPT racperf-watchdog MARK GRACE LIMIT COMMAND DEADLINE (not the grep
            # nor the listing itself, whose argv only mention the name)
            if len(argv) < 8 or argv[1] != "-c" or argv[3] != WATCHDOG_NAME or not argv[4].startswith("racperf-"):
                continue
            procs[int(fields[0])] = (int(fields[1]), int(fields[2]), argv)
        elif kind == "dir":
            stamp, _, name = rest.partition(" ")
            if name:
                dirs[name] = float(stamp) if stamp.isdigit() else 0.0
    runs: list[NodeRun] = []
    for pid, (ppid, start, argv) in sorted(procs.items()):
        parent = procs.get(ppid)
        if parent is not None and parent[2][4] == argv[4]:
            continue  # a subshell of the watchdog (tracker, deadman, reader)
        name, run_id = _parse_mark(argv[4])
        elapsed = max(0.0, uptime - start / hz) if uptime is not None else None
        runs.append(NodeRun(name, run_id, True, pid, argv[4], elapsed, argv[7], dirs.pop(name, None)))
    for name, mtime in sorted(dirs.items()):
        head, _, tail = name.rpartition("-")
        runs.append(NodeRun(name, int(tail) if head and tail.isdigit() else None, False, directory_mtime=mtime))
    return runs


def list_node_runs(connection: Connection, base: str = "$HOME/.racperf/runs", timeout_s: float = 30.0) -> list[NodeRun]:
    """racperf's runs on the node (running ones first); OSError / TimeoutError."""
    base_word = q(base) if not base.startswith("$HOME/") else '"$HOME"/' + q(base[len("$HOME/") :])
    status, out, err = connection.run(
        f"sh -c {q(LIST_SH)} racperf-runs {base_word}", timeout_s=timeout_s, limit=4 << 20
    )
    if status != 0:
        raise OSError(
            f"{connection.target.display}: listing racperf's runs failed: {err.decode(errors='replace').strip()}"
        )
    return parse_listing(out.decode("utf-8", "replace"))


@dataclass(frozen=True)
class NodeStop:
    signalled: int  # processes TERMed
    killed: int  # processes KILLed after the grace (0: all gone in time)


def stop_node_run(connection: Connection, run: NodeRun, grace_s: float = 15.0) -> NodeStop:
    """Stop a running NodeRun on its node (see the module doc); OSError / TimeoutError."""
    if run.pid is None or not run.mark:
        raise ValueError(f"run {run.name} does not run on {connection.target.display}")
    steps = max(1, math.ceil(grace_s / 0.2))
    status, out, err = connection.run(
        f"sh -c {q(STOP_SH)} racperf-stop {run.pid} {q(run.mark)} {steps}", timeout_s=grace_s * 2 + 30
    )
    words = out.decode("utf-8", "replace").split()
    if status != 0 or "term" not in words:
        raise OSError(
            f"{connection.target.display}: stopping {run.name} failed: {err.decode(errors='replace').strip()}"
        )
    signalled = int(words[words.index("term") + 1])
    killed = int(words[words.index("killed") + 1]) if "killed" in words else 0
    return NodeStop(signalled, killed)
