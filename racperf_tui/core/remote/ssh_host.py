"""The SSH host: an Invocation run on another node over one SSH connection (core/remote/ssh.py), with
the same five operations as LocalHost, so no tool changes when its runs move.

Commands are built from argument lists, every word shell-quoted (``shlex.quote``): a path with
spaces, quotes, ';' or '$(...)' arrives as one argument and runs nothing. Output is read as
bytes. The Invocation's env and working directory are applied in the remote shell; its stdin
text is written to a file in the run's remote directory and redirected.

Paths: the run's remote directory is ``REMOTE_BASE/<this host>-<run dir name>`` (REMOTE_BASE
defaults to ~/.racperf/runs on the node). A tool names files of its run's directory with the
local path (``DATA_DIR/runs/ID/job.fio``): every occurrence of the local run directory in the
argv, env values, cwd and the files' text is mapped to the remote one.

A remote benchmark dies with its link and when stopped. OpenSSH before 7.9 ignores signal
requests, and a command without a terminal outlives its closed connection, so each command runs
under a small POSIX-sh watchdog (:data:`WATCHDOG_SH`): the command in its own process group
(``setsid`` where present; ``timeout`` makes its own group too), bounded by ``timeout`` where
present and a hard limit is known; the watchdog holds the channel's stdin and kills the group
(TERM, grace, KILL) when it reaches EOF, i.e. when the channel or the connection closes; it also
stops what the leader left behind in its group. A stop is a separate command on the same
connection: ``kill -s TERM -- -PGID``, then KILL after the grace.
"""

from __future__ import annotations

import hashlib
import math
import posixpath
import re
import secrets
import shlex
import signal
import socket
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from racperf_tui.core.contract.hosts import MAX_RESULT_FILE_BYTES, MAX_RESULT_FILES, STDIN_FILE, BriefOutput
from racperf_tui.core.contract.invocation import WRITE, Invocation, Target
from racperf_tui.core.guard.devjail import unjail_argv
from racperf_tui.core.guard.target_guard import GuardVerdict
from racperf_tui.core.guard.write_watch import Violation, WriteWatch
from racperf_tui.core.remote.node_facts import gather_and_judge
from racperf_tui.core.remote.node_net import NetReport, net_command
from racperf_tui.core.remote.node_vetting import NodeVetter
from racperf_tui.core.remote.run_dirs import KEEP_RUN_DIRS, PRUNE_SH
from racperf_tui.core.remote.ssh import Channel, Connection, SshError, SshTarget, connect

#: $1 mark, $2 grace (whole seconds), $3 limit (s, 0: none), $4 the command (a shell line),
#: $5 the heartbeat deadline (s, 0: none): a line comes on stdin every second from the client
#: (any line is a beat); none for that long and the link is taken as dead (a cable cut, a
#: client host that froze: no EOF ever comes), so the whole tree is stopped as on EOF, and
#: "MARK watchdog-stop EPOCH DEADLINE" said on stderr first (read by a link that came back).
#: The group's leader prints "MARK pgid N" on stderr before it execs anything. A line "TERM"
#: or "KILL" on stdin signals the group and every tracked process; EOF stops them (TERM,
#: grace, KILL). The tracker looks every second for 10 s, then every 3 s (ppid chains from
#: the leader, and the group's members; with ps and awk where present, else a /proc walk in
#: sh) and keeps "pid:starttime" of each in a file (``$TMPDIR/MARK.PID/list``, in a 0700
#: directory the watchdog made), so processes that left the group with
#: setsid() (fio's workers) are stopped too, and a reused pid never is; the gone are dropped
#: from it at each look (a companion's loop forks all the time).
WATCHDOG_SH = r"""
mark=$1 grace=$2 limit=$3 cmd=$4 dead=${5:-0}
exec 3<&0 </dev/null
# the trackers of this login's watchdogs that are gone (killed with their sshd before they
# could clean up: their sh's pid, the name's last part, is no process) are removed, before
# the command starts (its start is when the client takes the run as begun)
for o in "${TMPDIR:-/tmp}"/racperf-*.*; do
  op=${o##*.}
  case $op in ''|*[!0-9]*) continue ;; esac
  [ -d "$o" ] && [ ! -L "$o" ] && [ -O "$o" ] || continue
  kill -s 0 "$op" 2>/dev/null && continue
  rm -f "$o/list" "$o/list.new" "$o/list.ref" "$o/list.beat"; rmdir "$o"
done 2>/dev/null
to=
if [ "$limit" != 0 ] && command -v timeout >/dev/null 2>&1; then to="timeout -k $grace $limit"; fi
ss=
if command -v setsid >/dev/null 2>&1; then ss=setsid; fi
$ss sh -c 'printf "%s pgid %s\n" "$1" "$$" >&2; shift; exec "$@"' racperf-run "$mark" $to sh -c "$cmd" 3<&- &
pg=$!
# the tracker's files in a directory of its own, made here (mkdir fails on a name that
# exists, a link included): $TMPDIR is everyone's, and the mark is in this sh's argv
td=${TMPDIR:-/tmp}/$mark.$$ t=
if ( umask 077; mkdir "$td" && : > "$td/list" ) 2>/dev/null; then t=$td/list; fi
started() {
  s=; read -r s 2>/dev/null < "/proc/$1/stat" || return 1
  s=${s##*) }; set -- $s
  [ "$1" != Z ] && st=${20}
}
closure='BEGIN { n = split(known, a, " "); for (i = 1; i <= n; i++) { split(a[i], b, ":"); k[b[1]] = 1 } }
{ pid[NR] = $1; pp[NR] = $2; gp[NR] = $3 }
END { do { added = 0; for (i = 1; i <= NR; i++)
  if (!(pid[i] in k) && (pp[i] in k || gp[i] == pg)) { k[pid[i]] = 1; print pid[i]; added = 1 }
} while (added) }'
scan() {
  # the gone are forgotten: a tree that forks all the time (a companion's loop) would grow
  # the list for the whole run, past what one awk argument may hold
  kept=
  for e in $known; do
    if started "${e%%:*}" && [ "$st" = "${e#*:}" ]; then kept="$kept $e"; fi
  done
  known=${kept# }
  if [ -n "$useps" ]; then
    for p in $(ps -e -o pid= -o ppid= -o pgid= 2>/dev/null | awk -v pg="$pg" -v known="$known" "$closure"); do
      if started "$p"; then known="$known $p:$st"; fi
    done
    return 0
  fi
  n=0
  while :; do
    added=
    for d in /proc/[0-9]*; do
      p=${d#/proc/}
      case " $known " in *" $p:"*) continue ;; esac
      s=; read -r s 2>/dev/null < "$d/stat" || continue
      s=${s##*) }; set -- $s
      case " $known " in *" $2:"*) ;; *) [ "$3" = "$pg" ] || continue ;; esac
      [ "$1" != Z ] || continue
      known="$known $p:${20}" added=1
    done
    n=$((n+1))
    [ -n "$added" ] && [ "$n" -lt 8 ] || break
  done
}
tracked_alive() {
  [ -n "$t" ] || return 1
  list=; read -r list 2>/dev/null < "$t"
  for e in $list; do
    if started "${e%%:*}" && [ "$st" = "${e#*:}" ]; then return 0; fi
  done
  return 1
}
anyalive() { kill -s 0 -- "-$pg" 2>/dev/null || kill -s 0 "$pg" 2>/dev/null || tracked_alive; }
sigall() {
  sig=$1
  kill -s "$sig" -- "-$pg" 2>/dev/null || kill -s "$sig" "$pg" 2>/dev/null
  [ -n "$t" ] || return 0
  list=; read -r list 2>/dev/null < "$t"
  for e in $list; do
    if started "${e%%:*}" && [ "$st" = "${e#*:}" ]; then kill -s "$sig" "${e%%:*}" 2>/dev/null; fi
  done
  return 0
}
stopgroup() {
  sigall TERM
  i=0
  while [ "$i" -lt "$grace" ] && anyalive; do sleep 1; i=$((i+1)); done
  sigall KILL
}
tr=
if [ -n "$t" ] && [ -r /proc/self/stat ]; then
  useps=
  if ps -e -o pid= -o ppid= -o pgid= 2>/dev/null | awk 'END { exit NR < 2 }' 2>/dev/null; then useps=1; fi
  ( known= written= c=0
    started "$pg" && known="$pg:$st"
    while kill -s 0 "$$" 2>/dev/null; do
      scan
      if [ "$known" != "$written" ]; then
        printf '%s\n' "$known" > "$t.new" && mv -f "$t.new" "$t" && written=$known
      fi
      # the workers appear in the first seconds; later, a look every 3 s is enough
      c=$((c+1)); if [ "$c" -lt 10 ]; then sleep 1; else sleep 3; fi
    done ) </dev/null >/dev/null 2>&1 3<&- &
  tr=$!
fi
dm=
if [ -n "$t" ] && [ "$dead" != 0 ]; then
  : > "$t.ref"; : > "$t.beat"
  # fd 4: the channel's stderr, for the one line that says the watchdog stopped the run (the
  # sleeps do not hold it: the channel's end must not wait for them)
  ( while kill -s 0 "$$" 2>/dev/null; do
      sleep "$dead" 4>&-
      if [ "$t.beat" -nt "$t.ref" ]; then : > "$t.ref"; else
        printf '%s watchdog-stop %s %s\n' "$mark" "$(date +%s)" "$dead" >&4; exec 4>&-
        stopgroup; break
      fi
    done ) </dev/null >/dev/null 4>&2 2>&1 3<&- &
  dm=$!
fi
( trap '' INT HUP PIPE
  while read -r line <&3; do
    [ -z "$t" ] || : > "$t.beat"
    case $line in TERM|KILL) sigall "$line" ;; esac
  done
  stopgroup ) </dev/null >/dev/null 2>&1 &
w=$!
exec 3<&-
wait "$pg"; rc=$?
if anyalive; then sleep 1; stopgroup; fi
kill "$w" $tr $dm 2>/dev/null
[ -z "$t" ] || { rm -f "$t" "$t.new" "$t.ref" "$t.beat"; rmdir "$td"; } 2>/dev/null
exit "$rc"
"""

#: $1 the program, $2 the limit (s), the rest: the command (``env NAME=VALUE ...`` first when
#: it has variables). A program that is not there says so in a word of its own (exit 127), so
#: "not installed on the node" is told apart from a program that exits 127 itself; the node's
#: ``timeout`` (where present) ends a command that hangs there even when the link dies.
BRIEF_SH = r"""
p=$1 limit=$2; shift 2
command -v -- "$p" >/dev/null 2>&1 || { printf '%s\n' racperf-program-not-found >&2; exit 127; }
if command -v timeout >/dev/null 2>&1; then exec timeout -k 2 "$limit" "$@"; fi
exec "$@"
"""
_NOT_FOUND_WORD = b"racperf-program-not-found"
#: a brief command's link gets this much over its own limit (the node's timeout ends it first)
BRIEF_MARGIN_S = 5.0
#: how long a channel that ended without an exit status waits for its connection to say it
#: dropped (asyncssh closes the channel first): an ended channel on a live connection is a
#: command that ended, not a lost link
LINK_LOST_SETTLE_S = 2.0

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: seconds start() waits for the remote group's id
START_TIMEOUT_S = 20.0
#: a beat on the watchdog's stdin this often (from the SSH thread: whatever the caller does)
HEARTBEAT_S = 1.0
#: no beat for this long and the node's watchdog stops the command: a link dead without a
#: word (no FIN, no RST) ends the benchmark there in 4 to 8 s, not at TCP's timeout
HEARTBEAT_DEADLINE_S = 4.0
#: margin over the hard limit for the node's own `timeout` (the supervisor stops it first)
REMOTE_LIMIT_MARGIN_S = 60.0


def q(word: str) -> str:
    return shlex.quote(word)


def shell_line(
    argv: list[str],
    *,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    stdin_path: str | None = None,
    merge_stderr: bool = False,
) -> str:
    """A shell command line that runs ``argv`` (each word one argument, nothing expanded) in
    ``cwd`` with ``env`` added and stdin from ``stdin_path`` (else /dev/null)."""
    if not argv:
        raise ValueError("empty command line")
    parts = []
    if cwd is not None:
        parts.append(f"cd -- {q(cwd)}")
    for name, value in (env or {}).items():
        if not _ENV_NAME.match(name):
            raise ValueError(f"environment variable name {name!r} is not a shell identifier")
        parts.append(f"export {name}={q(value)}")
    redirect = f"< {q(stdin_path)}" if stdin_path is not None else "</dev/null"
    if merge_stderr:
        redirect += " 2>&1"
    parts.append("exec " + " ".join(q(word) for word in argv) + " " + redirect)
    return " && ".join(parts)


def watchdog_command(
    command: str, mark: str, grace_s: float, limit_s: float | None, heartbeat_deadline_s: float = 0
) -> str:
    """The command line (for the node's login shell) that runs ``command`` under the watchdog."""
    limit = 0 if not limit_s else max(1, math.ceil(limit_s))
    dead = 0 if not heartbeat_deadline_s else max(2, math.ceil(heartbeat_deadline_s))
    return (
        f"exec sh -c {q(WATCHDOG_SH)} racperf-watchdog {q(mark)} {max(1, math.ceil(grace_s))} {limit} "
        f"{q(command)} {dead}"
    )


def exit_code(status: int | None, signal_name: str | None) -> int:
    """The channel's end as a returncode: negative for a signal (the watchdog's 128+N too,
    as sh reports a signal death), 255 when the link died without an exit status (as ssh)."""
    if signal_name:
        try:
            return -int(getattr(signal, "SIG" + signal_name))
        except (AttributeError, TypeError):
            return 255
    if status is None:
        return 255
    if 128 < status <= 128 + 64:
        return -(status - 128)
    return status


class RemoteProcess:
    """A command on a node under the watchdog, with the interface the supervisor uses of a
    SupervisedProcess. ``pgid`` is None (nothing local to signal: the store's benchmark pgid
    is a local one); ``pid`` and :attr:`remote_pgid` are the group leader's pid on the node."""

    def __init__(
        self,
        connection: Connection,
        command: str,
        *,
        grace_s: float = 3.0,
        limit_s: float | None = None,
        linger_s: float = 1.0,
        net: NetReport | None = None,
        run_name: str = "",
    ) -> None:
        """``run_name``: the run's remote directory name, in the watchdog's mark, so the node's
        processes say which run they are (``racperf runs list/stop --node``, core/remote/node_runs.py)."""
        self.connection = connection
        self.net = net
        self.command = command
        self.grace_s = grace_s
        self.limit_s = limit_s
        self.linger_s = linger_s
        self.mark = "racperf-" + (f"{run_name}-" if run_name else "") + secrets.token_hex(6)
        self.remote_pgid: int | None = None
        self.returncode: int | None = None
        self.violations: list[Violation] = net.violations if net is not None else []
        self.started_monotonic: float | None = None
        self._channel: Channel | None = None
        self._held: list[tuple[str, bytes]] = []  # read while waiting for the group id
        self._stderr_head = b""
        self._open_streams = {"stdout", "stderr"}
        self._stop_sent_at: float | None = None
        self._stop_grace_s = 0.0
        self._killed = False
        self._exit_seen_at: float | None = None
        self._keepalive_held = False
        #: the node's epoch second its watchdog stopped the command for want of heartbeats
        #: (a link that came back later: the channel ended with the watchdog's signal)
        self.watchdog_stopped_at: float | None = None
        self.watchdog_deadline_s: float = HEARTBEAT_DEADLINE_S

    # ---- start ---------------------------------------------------------------------------
    def start(self) -> RemoteProcess:
        """Open the channel and wait for the remote group's id; SshError."""
        line = watchdog_command(self.command, self.mark, self.grace_s, self.limit_s, HEARTBEAT_DEADLINE_S)
        self._channel = self.connection.open_channel(line)
        self.connection.run_started()
        self._keepalive_held = True
        self._channel.heartbeat(HEARTBEAT_S, b"beat\n")
        self.started_monotonic = time.monotonic()
        deadline = self.started_monotonic + START_TIMEOUT_S
        while self.remote_pgid is None:
            if self._channel.closed and not self._channel.pending:
                break
            if time.monotonic() > deadline:
                self._channel.close()
                raise SshError(
                    f"{self.connection.target.display}: the command did not start within {START_TIMEOUT_S:g} s"
                )
            self._held.extend(self._filter(self._channel.read(0.5)))
        return self

    def _filter(self, chunks: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
        """Take the group id line off the head of stderr and the watchdog's stop line out of
        it; track the streams' ends."""
        out = []
        for stream, chunk in chunks:
            if stream == "stderr" and chunk and self.remote_pgid is not None:
                chunk = self._watchdog_line(chunk)
                if not chunk:
                    continue
            if stream == "stderr" and self.net is not None:
                self.net.feed(chunk)
            if stream == "stderr" and self.remote_pgid is None and chunk:
                self._stderr_head += chunk
                head = self.mark.encode() + b" pgid "
                if b"\n" not in self._stderr_head and len(self._stderr_head) < 4096:
                    continue
                first, _, rest = self._stderr_head.partition(b"\n")
                if first.startswith(head) and first[len(head) :].isdigit():
                    self.remote_pgid = int(first[len(head) :])
                    chunk = rest
                else:
                    chunk = self._stderr_head
                    self.remote_pgid = -1  # none announced (no sh there?): nothing to signal
                self._stderr_head = b""
                if not chunk:
                    continue
            elif stream == "stderr" and not chunk and self._stderr_head:
                out.append((stream, self._stderr_head))
                self._stderr_head = b""
            if not chunk:
                self._open_streams.discard(stream)
            out.append((stream, chunk))
        return out

    def _watchdog_line(self, chunk: bytes) -> bytes:
        """``chunk`` without the watchdog's "MARK watchdog-stop EPOCH DEADLINE" line, noted in
        :attr:`watchdog_stopped_at` (a line of its own, written at once: one chunk)."""
        head = self.mark.encode() + b" watchdog-stop "
        at = chunk.find(head)
        if at < 0:
            return chunk
        end = chunk.find(b"\n", at)
        end = len(chunk) if end < 0 else end + 1
        words = chunk[at + len(head) : end].split()
        if words and words[0].isdigit():
            self.watchdog_stopped_at = float(words[0])
        if len(words) > 1 and words[1].isdigit():
            self.watchdog_deadline_s = float(words[1])
        return chunk[:at] + chunk[end:]

    @property
    def pid(self) -> int | None:
        return self.remote_pgid if self.remote_pgid and self.remote_pgid > 0 else None

    @property
    def pgid(self) -> None:
        """No local process group (see the class doc)."""
        return None

    # ---- reading -------------------------------------------------------------------------
    def read(self, timeout_s: float, extra_fds: tuple[int, ...] | list[int] = ()) -> list[tuple[str, bytes]]:
        assert self._channel is not None
        if self._held:
            held, self._held = self._held, []
            return held
        if not self._open_streams:
            self._channel.read(timeout_s, extra_fds)
            return []
        return self._filter(self._channel.read(timeout_s, extra_fds))

    @property
    def output_open(self) -> bool:
        return bool(self._open_streams)

    @property
    def leader_exited(self) -> bool:
        assert self._channel is not None
        return self._channel.exit_status is not None or self._channel.exit_signal is not None or self._channel.closed

    @property
    def link_lost(self) -> bool:
        """The channel ended without an exit status or signal: the connection died (the
        node's watchdog ends the command when it sees its stdin close)."""
        assert self._channel is not None
        return (
            self._channel.closed
            and self._channel.exit_status is None
            and self._channel.exit_signal is None
            and self.connection.wait_closed(LINK_LOST_SETTLE_S)
        )

    @property
    def finished(self) -> bool:
        """The channel ended and its output was read, or the command exited and whatever
        still holds its output (outside its group) had the linger time and the stop grace."""
        assert self._channel is not None
        if self._channel.closed and not self._channel.pending and not self._held:
            return True
        if self.leader_exited:
            if self._exit_seen_at is None:
                self._exit_seen_at = time.monotonic()
            return time.monotonic() - self._exit_seen_at > self.linger_s + self._stop_grace_s + 1.0
        return False

    # ---- stopping ------------------------------------------------------------------------
    def _signal(self, name: str) -> None:
        """Ask the watchdog (a line on its stdin: signal requests are ignored before OpenSSH
        7.9) to signal the group and every process it tracked. A link that is gone needs no
        word: the watchdog stops them all when it sees the channel close."""
        if self._channel is not None and not self._channel.closed:
            self._channel.write(f"{name}\n".encode())

    def stop(self, grace_s: float) -> None:
        """TERM to the remote group now (a command of its own on the connection); :meth:`tick`
        sends KILL after ``grace_s``. Idempotent."""
        if self._stop_sent_at is not None:
            return
        self._stop_sent_at = time.monotonic()
        self._stop_grace_s = grace_s
        if not self.leader_exited:
            self._signal("TERM")

    @property
    def stop_requested(self) -> bool:
        return self._stop_sent_at is not None

    def kill(self) -> None:
        self._killed = True
        if not self.leader_exited:
            self._signal("KILL")

    def tick(self) -> None:
        if (
            self._stop_sent_at is not None
            and not self._killed
            and time.monotonic() - self._stop_sent_at >= self._stop_grace_s
        ):
            self.kill()

    # ---- end -----------------------------------------------------------------------------
    def reap(self, timeout_s: float = 10.0) -> int:
        """Wait for the channel's end (KILL after ``timeout_s``); the exit status (negative:
        a signal; 255: the link died)."""
        if self.returncode is not None:
            return self.returncode
        assert self._channel is not None
        if not self._channel.wait_closed(timeout_s) and not self.leader_exited:
            self.kill()
            self._channel.wait_closed(5.0)
        self.returncode = exit_code(self._channel.exit_status, self._channel.exit_signal)
        return self.returncode

    def close(self) -> None:
        """Close the channel: were the command still running, its watchdog stops it."""
        if self._channel is not None:
            self._channel.close()
        if self._keepalive_held:
            self._keepalive_held = False
            self.connection.run_ended()

    def __enter__(self) -> RemoteProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        if self.returncode is None:
            self.kill()
            self.reap()
        self.close()


def remote_run_prefix(runs_dir: Path) -> str:
    """How the run directories of the store whose runs live in ``runs_dir`` begin on a node:
    this host's name and a hash of that directory."""
    store = hashlib.sha256(str(runs_dir.absolute()).encode()).hexdigest()[:8]
    return f"{socket.gethostname()}-{store}-"


#: the login's shell, which runs racperf's own scripts on a node (never vetted as a program)
_LOGIN_SHELLS = frozenset({"sh", "/bin/sh"})


class SshHost:
    """A node reached over SSH (see the module doc). ``remote_base``: where runs' directories
    go on the node (default ~/.racperf/runs)."""

    remote = True

    def __init__(
        self,
        target: SshTarget,
        *,
        remote_base: str | None = None,
        connection: Connection | None = None,
        name: str | None = None,
    ) -> None:
        self.target = target
        #: the node's name (the cluster file's; ``user@host:port`` for an ad hoc node)
        self.name = name or target.display
        self._connection = connection
        self._remote_base = remote_base
        self._home: str | None = None
        #: run directories judged private on the node (:meth:`_vet_run_directory`)
        self._vetted_dirs: set[str] = set()
        #: programs vetted on the node before run_briefly asked them (:meth:`_vet_brief_program`)
        self._vetted_programs: set[str] = set()

    @property
    def connection(self) -> Connection:
        if self._connection is None or self._connection.closed:
            self._connection = connect(self.target)
        return self._connection

    def _run(self, command: str, **kw: Any) -> tuple[int | None, bytes, bytes]:
        return self.connection.run(command, **kw)

    def judge_targets(self, targets: Iterable[Target], override: bool | set[str] = False) -> GuardVerdict:
        """The write guard on the node: its mounts, swaps, holders, open files and signatures,
        gathered over the connection and judged by the local code (core/remote/node_facts.py). A node
        that cannot be reached blocks every target (no override lifts it)."""
        targets = list(targets)
        try:
            connection = self.connection
        except OSError as exc:
            verdict = GuardVerdict()
            verdict.blocked += [f"{t.path} ({t.origin}) on {self.name}: cannot judge it: {exc}" for t in targets]
            return verdict
        return gather_and_judge(connection, self.name, targets, override)

    @property
    def remote_base(self) -> str:
        if self._remote_base is None:
            status, out, err = self._run('printf %s "$HOME"', timeout_s=30.0)
            home = out.decode("utf-8", "replace")
            if status != 0 or not home.startswith("/"):
                raise SshError(
                    f"{self.name}: no home directory for the run directories: {err.decode('utf-8', 'replace').strip()}"
                )
            self._remote_base = home.rstrip("/") + "/.racperf/runs"
        return self._remote_base

    def remote_dir(self, directory: Path) -> str:
        """The run's directory on the node: this host's name, which data dir (run ids repeat
        across data dirs, and one login may serve several users' racperf), the run's id."""
        return f"{self.remote_base}/{remote_run_prefix(directory.parent)}{directory.name}"

    def _mapper(self, directory: Path) -> Callable[[str], str]:
        local = str(directory)
        remote = self.remote_dir(directory)
        resolved = str(directory.resolve()) if directory.exists() else local

        def map_text(text: str) -> str:
            text = text.replace(local, remote)
            return text.replace(resolved, remote) if resolved != local else text

        return map_text

    # ---- the Host protocol ----------------------------------------------------------------
    def run_briefly(
        self,
        argv: list[str],
        timeout_s: float,
        *,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
    ) -> BriefOutput:
        """``argv`` run to its end on the node (``env`` added, ``stdin`` text else nothing):
        FileNotFoundError naming the node when the program is not there, TimeoutError past
        ``timeout_s``, SshError (an OSError) when the node cannot be reached."""
        if not argv:
            raise ValueError("empty command line")
        self._vet_brief_program(argv[0])
        words = [argv[0], str(max(1, math.ceil(timeout_s)))]
        if env:
            bad = [name for name in env if not _ENV_NAME.match(name)]
            if bad:
                raise ValueError(f"environment variable name {bad[0]!r} is not a shell identifier")
            words += ["env", *(f"{name}={value}" for name, value in env.items())]
        words += argv
        command = f"sh -c {q(BRIEF_SH)} racperf-brief " + " ".join(q(word) for word in words)
        try:
            status, out, err = self._run(
                command, stdin=(stdin or "").encode("utf-8"), timeout_s=timeout_s + BRIEF_MARGIN_S
            )
        except TimeoutError:
            raise TimeoutError(f"{self.name}: {argv[0]} did not end within {timeout_s:g} s") from None
        if status == 127 and _NOT_FOUND_WORD in err:
            raise FileNotFoundError(f"{self.name}: {argv[0]!r} not found on the node")
        if status == 124:  # the node's timeout(1) ended it
            raise TimeoutError(f"{self.name}: {argv[0]} did not end within {timeout_s:g} s")
        if status is None:
            raise SshError(f"{self.name}: the link ended while {argv[0]} ran")
        return BriefOutput(status, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))

    def _vet_brief_program(self, program: str) -> None:
        """A program asked something on the node vetted there first (as this machine's
        run_briefly does): UntrustedPath names it, its owner and mode on the node. ``sh`` is the
        login's own shell, which runs racperf's scripts (the vetting's own questions too): a
        script that runs a program vets it itself (fio: tools/fio ``fio_on``)."""
        if program in _LOGIN_SHELLS or program in self._vetted_programs:
            return
        try:
            NodeVetter(self).program(program, f"a program racperf asks while planning on {self.name}")
        except FileNotFoundError:
            return  # the command itself then says it is missing there
        self._vetted_programs.add(program)

    def which(self, program: str) -> str | None:
        status, out, _ = self._run(f"command -v -- {q(program)}", timeout_s=30.0)
        path = out.decode("utf-8", "replace").strip()
        return path if status == 0 and path.startswith("/") and "\n" not in path else None

    def put_files(self, directory: Path, files: dict[str, str]) -> None:
        """Write each file (mode 0600, through `cat >`) into the run's remote directory; a
        name that leaves it is refused."""
        remote = self.remote_dir(directory)
        map_text = self._mapper(directory)
        status, _, err = self._run(f"umask 077 && mkdir -p -- {q(remote)}", timeout_s=30.0)
        if status != 0:
            raise SshError(f"{self.name}: cannot create {remote}: {err.decode('utf-8', 'replace').strip()}")
        fresh = remote not in self._vetted_dirs
        self._vet_run_directory(remote)
        if fresh:
            self._prune_run_dirs(remote)
        for name, text in files.items():
            if not name or "/" in name or name in (".", ".."):
                raise ValueError(f"file {name!r} of the run would leave its directory {directory}")
            path = f"{remote}/{name}"
            status, _, err = self._run(
                f"umask 077 && cat > {q(path)}", stdin=map_text(text).encode("utf-8"), timeout_s=60.0
            )
            if status != 0:
                raise SshError(f"{self.name}: cannot write {path}: {err.decode('utf-8', 'replace').strip()}")

    def _prune_run_dirs(self, remote: str) -> None:
        """The node's run directories but the newest KEEP_RUN_DIRS removed, never a running
        run's nor this one's (core/remote/run_dirs.py). Best effort: a run is not refused
        because old directories could not go."""
        command = (
            f"sh -c {q(PRUNE_SH)} racperf-prune {q(self.remote_base)} {KEEP_RUN_DIRS} {q(posixpath.basename(remote))}"
        )
        try:
            self._run(command, timeout_s=30.0)
        except (OSError, TimeoutError):
            pass

    def _vet_run_directory(self, remote: str) -> None:
        """The node's run directory and the runs' base above it private to the login (owned by
        it or root, writable by nobody else, core/guard/private_dirs.py): another user of the
        node could otherwise swap the job file racperf put there before fio reads it.
        UntrustedPath (a ValueError) naming the directory, its owner and mode on the node."""
        if remote in self._vetted_dirs:
            return
        vetter = NodeVetter(self)
        for directory in (self.remote_base, remote):
            vetter.private_directory(directory, "run directory")
        self._vetted_dirs.add(remote)

    def start(
        self,
        invocation: Invocation,
        directory: Path,
        *,
        merge_stderr: bool = False,
        write_watch: WriteWatch | None = None,
        argv: list[str] | None = None,
        judged: Mapping[str, tuple[int, int]] | None = None,
        grace_s: float = 3.0,
    ) -> RemoteProcess:
        """Start ``argv`` (default: the Invocation's) on the node with its env, cwd and stdin
        under the watchdog; SshError (an OSError) when it cannot."""
        map_text = self._mapper(directory)
        argv = argv or invocation.argv
        unjailed = unjail_argv(argv) if write_watch is not None else None
        if unjailed is not None:  # the local jail's wrapper: the node's own net takes its place
            argv = unjailed[0]
        remote = self.remote_dir(directory)
        stdin_path = None
        if invocation.stdin is not None:
            self.put_files(directory, {STDIN_FILE: invocation.stdin})
            stdin_path = f"{remote}/{STDIN_FILE}"
        cwd = None
        if invocation.cwd is not None:
            cwd = (
                map_text(invocation.cwd)
                if invocation.cwd.startswith("/")
                else posixpath.normpath(f"{remote}/{invocation.cwd}")
            )
            self._run(f"umask 077 && mkdir -p -- {q(remote)}", timeout_s=30.0)
        command = shell_line(
            [map_text(word) for word in argv],
            cwd=cwd,
            env={k: map_text(v) for k, v in invocation.env.items()},
            stdin_path=stdin_path,
            merge_stderr=merge_stderr,
        )
        net = None
        if write_watch is not None:  # the write watch and device jail on the node (core/remote/node_net.py)
            net = NetReport("racperf-" + secrets.token_hex(6))
            # a file the node's guard judged goes as @DEV:INO:PATH: the node's jail binds that file
            pins = judged or {}
            writable = [
                f"@{pins[t.path][0]}:{pins[t.path][1]}:{map_text(t.path)}" if t.path in pins else map_text(t.path)
                for t in invocation.targets
                if t.access == WRITE and not t.node
            ]
            writable += [f"{remote}/"] + ([f"{cwd}/"] if cwd else [])  # "/": a directory
            command = net_command(command, net.mark, [map_text(t.path) for t in invocation.targets], writable)
        limit = invocation.hard_limit_s + REMOTE_LIMIT_MARGIN_S if invocation.hard_limit_s else None
        return RemoteProcess(
            self.connection, command, grace_s=grace_s, limit_s=limit, net=net, run_name=posixpath.basename(remote)
        ).start()

    def fetch_files(self, directory: Path, invocation: Invocation) -> dict[str, str]:
        """The files matching the Invocation's result patterns on the node (expanded by the
        node's shell: globbing only, nothing else), read as text, each bounded."""
        if not invocation.result_files:
            return {}
        map_text = self._mapper(directory)
        if invocation.cwd is None:
            base = "."
        elif invocation.cwd.startswith("/"):
            base = map_text(invocation.cwd)
        else:
            base = f"{self.remote_dir(directory)}/{invocation.cwd}"
        lister = (
            'cd -- "$1" || exit 1; shift; IFS=\'\n\'; for p in "$@"; do for f in $p; do '
            '[ -f "$f" ] && printf \'%s\\0\' "$f"; done; done; true'
        )
        status, out, _ = self._run(
            f"sh -c {q(lister)} racperf-fetch {q(base)} " + " ".join(q(p) for p in invocation.result_files),
            timeout_s=60.0,
        )
        found: dict[str, str] = {}
        for raw in sorted(set(out.split(b"\0")) - {b""}):
            path = raw.decode("utf-8", "replace")
            name = path.rsplit("/", 1)[-1]
            if len(found) >= MAX_RESULT_FILES or name in found:
                continue
            full = path if path.startswith("/") else f"{base}/{path}"
            _, data, _ = self._run(
                f"head -c {MAX_RESULT_FILE_BYTES + 1} -- {q(full)} 2>/dev/null || cat -- {q(full)}",
                timeout_s=120.0,
                limit=MAX_RESULT_FILE_BYTES + 1,
            )
            text = data[:MAX_RESULT_FILE_BYTES].decode("utf-8", errors="replace")
            if len(data) > MAX_RESULT_FILE_BYTES:
                text += f"\n[racperf: {name} cut at {MAX_RESULT_FILE_BYTES} bytes]\n"
            found[name] = text
        return found
