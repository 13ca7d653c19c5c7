"""A supervised local process: its own session and process group, a watchdog, chunked reads,
and a stop that reaches every process it started.

Guarantees:
- The command runs in a new session (``setsid``), so its process group id equals its pid and
  no terminal hang-up or Ctrl-C aimed at the launcher reaches it.
- Its descendants are tracked too, not only its process group: fio's job processes call
  ``setsid()`` themselves and leave the group. The tree is sampled from /proc shortly after
  start and then every few seconds (backing off, as workers are forked at start), remembered
  by (pid, start time) so a reused pid is never signalled.
- A watchdog process holds the read end of a pipe whose write end only we hold, and learns
  every tracked pid through it. When we die, even by kill -9, the kernel closes our end; the
  watchdog reads EOF, sends SIGTERM to the group and every tracked process and its
  descendants, waits ``watchdog_grace_s`` and sends SIGKILL. On a clean end we tell it
  ``done`` first, so it never signals a group id that may since have been reused.
- The leader's exit is observed with ``waitid(WNOWAIT)``: it stays an unreaped zombie, which
  keeps the process group id reserved while we stop the stragglers, then :meth:`reap`
  collects the leader and every tracked child of ours.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from typing import NamedTuple

from racperf_tui.core.guard.isolated_python import isolated_code_argv
from racperf_tui.core.guard.write_watch import Violation, WriteWatch

#: bytes per os.read(); large reads keep a 5 MB line to a few dozen system calls
READ_CHUNK_BYTES = 256 * 1024

# Runs with -S (no site import: starts in ~20 ms) and only the standard library.
# Protocol on stdin, one line each: "G pgid", "P pid starttime", "done". EOF without "done"
# means the supervisor died: stop everything it had started.
_WATCHDOG_CODE = r"""
import os, signal, sys, time
for s in (signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
    signal.signal(s, signal.SIG_IGN)
grace_s = float(sys.argv[1])
pgid = None
known = {}
buf = b""
while True:
    try:
        data = os.read(0, 4096)
    except InterruptedError:
        continue
    if not data:
        break
    buf += data
    *lines, buf = buf.split(b"\n")
    for line in lines:
        parts = line.split()
        if parts == [b"done"]:
            sys.exit(0)
        if len(parts) == 2 and parts[0] == b"G":
            pgid = int(parts[1])
        elif len(parts) == 3 and parts[0] == b"P":
            known[int(parts[1])] = int(parts[2])
if pgid is None and not known:
    sys.exit(0)

def table():
    procs = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry, "rb") as fh:
                    stat = fh.read()
            except OSError:
                continue
            f = stat[stat.rfind(b")") + 2:].split()
            procs[int(entry)] = (f[0], int(f[1]), int(f[2]), int(f[19]))
    return procs

def targets():
    procs = table()
    alive = {p for p, st in known.items() if p in procs and procs[p][3] == st}
    alive |= {p for p, v in procs.items() if pgid is not None and v[2] == pgid}
    children = {}
    for p, v in procs.items():
        children.setdefault(v[1], []).append(p)
    todo = list(alive)
    while todo:
        for c in children.get(todo.pop(), ()):
            if c not in alive and c != os.getpid():
                alive.add(c)
                todo.append(c)
    for p in alive:
        known.setdefault(p, procs[p][3])
    return {p for p in alive if procs[p][0] not in (b"Z", b"X")}

def signal_all(sig, pids):
    if pgid is not None:
        try:
            os.killpg(pgid, sig)
        except OSError:
            pass
    for p in pids:
        try:
            os.kill(p, sig)
        except OSError:
            pass

signal_all(signal.SIGTERM, targets())
deadline = time.monotonic() + grace_s
while time.monotonic() < deadline and targets():
    time.sleep(0.1)
signal_all(signal.SIGKILL, targets())
"""


def detach() -> None:
    """Fork; the parent reports the child's pid on stdout and exits, the child starts a new
    session with stdin on /dev/null (a detached supervisor, a sweep's driver). Call it before
    the store is opened (no shared sqlite)."""
    child = os.fork()
    if child:
        os.write(1, f"{child}\n".encode())
        os._exit(0)
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.close(devnull)


def output_to(log: str | None, detached: bool) -> None:
    """stdout and stderr appended to ``log`` (line-buffered), else, ``detached``, to /dev/null
    (the terminal that started the process may be gone)."""
    if log:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        sys.stdout = open(1, "w", buffering=1, closefd=False)
        sys.stderr = open(2, "w", buffering=1, closefd=False)
    elif detached:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.close(devnull)


def start_detached(command: list[str], cwd: str, env: dict[str, str], timeout_s: float) -> tuple[int | None, str]:
    """Run ``command``, which detaches (:func:`detach`) and prints its detached child's pid,
    in a new session off the caller's terminal; (that pid, '') or (None, why it did not start)."""
    try:
        proc = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            start_new_session=True,
            timeout=timeout_s,
            env=env,
            cwd=cwd,
        )
        if proc.returncode == 0 and proc.stdout.strip():
            return int(proc.stdout.decode().split()[0]), ""
    except (subprocess.TimeoutExpired, OSError, ValueError) as exc:
        return None, str(exc)
    return None, proc.stderr.decode(errors="replace").strip()[-500:] or f"exit status {proc.returncode}"


def set_child_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux PR_SET_CHILD_SUBREAPER),
    so grandchildren left behind by a benchmark's leader are reparented to us, killed with the
    group and reaped by :meth:`SupervisedProcess.reap` instead of lingering as zombies of init.
    Returns False where unsupported."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        ok = libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False
    global _IS_SUBREAPER
    _IS_SUBREAPER = _IS_SUBREAPER or ok
    return ok


#: set by set_child_subreaper(): orphans of our benchmarks become our children
_IS_SUBREAPER = False
#: the leaders and watchdogs of every SupervisedProcess of this process: as a subreaper, one
#: adopts our other children (orphans of its tree), never another's leader or watchdog (a run's
#: companion commands run beside its benchmark: neither may stop or reap the other)
_OWNED_PIDS: set[int] = set()


class ProcInfo(NamedTuple):
    """The fields of /proc/PID/stat we use."""

    state: bytes
    ppid: int
    pgrp: int
    starttime: int  # clock ticks since boot: with the pid, identifies one process for good


def process_table() -> dict[int, ProcInfo]:
    """Every process on the system, from /proc (cost: one small read per process)."""
    procs: dict[int, ProcInfo] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return procs
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # the command name may contain spaces and parens: split after its closing paren
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) >= 20:
            procs[int(entry)] = ProcInfo(fields[0], int(fields[1]), int(fields[2]), int(fields[19]))
    return procs


def _live(info: ProcInfo | None) -> bool:
    return info is not None and info.state not in (b"Z", b"X")


def group_members(pgid: int, table: dict[int, ProcInfo] | None = None) -> list[int]:
    """Live (non-zombie) pids whose process group is ``pgid``."""
    table = process_table() if table is None else table
    return [pid for pid, info in table.items() if info.pgrp == pgid and _live(info)]


def descendants(roots: Iterable[int], table: dict[int, ProcInfo]) -> set[int]:
    """All processes below ``roots`` in the parent tree (roots excluded)."""
    children: dict[int, list[int]] = {}
    for pid, info in table.items():
        children.setdefault(info.ppid, []).append(pid)
    found: set[int] = set()
    todo = list(roots)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


#: seconds between two looks of the write watch at the benchmark's open files
WRITE_WATCH_INTERVAL_S = 0.25

#: seconds after start at which the process tree is sampled, then every last interval
_TREE_SCAN_AT_S = (0.05, 0.2, 0.5, 1.0, 2.0, 3.5, 5.0)
_TREE_SCAN_EVERY_S = 5.0


class SupervisedProcess:
    """One command in its own session and process group, read in chunks; stopping reaches
    its group and every process of its tree, including those that left the group.

    Typical use (the supervisor)::

        proc = SupervisedProcess(argv).start()
        while not proc.finished:
            for stream, chunk in proc.read(timeout_s=0.2):
                ...            # chunk == b"" means that stream reached EOF
            proc.tick()        # escalates a pending stop to SIGKILL on time
        status = proc.reap()
        proc.close()
    """

    def __init__(
        self,
        argv: list[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        merge_stderr: bool = False,
        watchdog_grace_s: float = 3.0,
        linger_s: float = 1.0,
        write_watch: WriteWatch | None = None,
        stdin_path: str | None = None,
    ) -> None:
        """``linger_s``: after the leader exits, how long its leftover group members and pipe
        holders get before the group is stopped and reading gives up.  ``write_watch``: every
        WRITE_WATCH_INTERVAL_S (in :meth:`tick`) the tree's open files are checked, and at the
        first violation the whole tree gets SIGKILL; :attr:`violations` says why."""
        if not argv:
            raise ValueError("empty command line")
        self.argv = list(argv)
        self.env = env
        self.cwd = cwd
        self.merge_stderr = merge_stderr
        self.watchdog_grace_s = watchdog_grace_s
        self.linger_s = linger_s
        self.pid: int | None = None
        self.returncode: int | None = None
        self.started_monotonic: float | None = None
        self._popen: subprocess.Popen[bytes] | None = None
        self._watchdog: subprocess.Popen[bytes] | None = None
        self._watchdog_w: int | None = None
        self._selector = selectors.DefaultSelector()
        self._streams: dict[int, str] = {}
        self._leader_exit: int | None = None  # raw exit status once the leader exited (unreaped)
        self._leader_exited_at: float | None = None
        self._stop_sent_at: float | None = None
        self._stop_grace_s = 0.0
        self._killed = False
        self._reaped = False
        self._known: dict[int, int] = {}  # tracked pid -> starttime (the leader included)
        self._scan_index = 0
        self._orphans_termed = False
        self._next_scan_at = 0.0
        self.write_watch = write_watch
        self.stdin_path = stdin_path
        self.violations: list[Violation] = []
        self._next_watch_at = 0.0

    # ---- start -------------------------------------------------------------------------------
    def start(self) -> SupervisedProcess:
        """Start the watchdog, then the command in a new session; FileNotFoundError /
        PermissionError when the command cannot be executed."""
        read_fd, write_fd = os.pipe()
        try:
            self._watchdog = subprocess.Popen(
                isolated_code_argv(_WATCHDOG_CODE, str(self.watchdog_grace_s)),
                stdin=read_fd,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
            )
        finally:
            os.close(read_fd)
        self._watchdog_w = write_fd
        _OWNED_PIDS.add(self._watchdog.pid)
        stdin = open(self.stdin_path, "rb") if self.stdin_path else None  # closed once the child has it
        try:
            self._popen = subprocess.Popen(
                self.argv,
                stdin=stdin if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT if self.merge_stderr else subprocess.PIPE,
                env=self.env,
                cwd=self.cwd,
                start_new_session=True,
                close_fds=True,
                bufsize=0,
            )
        except BaseException:
            self._tell_watchdog(b"done\n")
            self._close_watchdog()
            raise
        finally:
            if stdin is not None:
                stdin.close()  # the child has its own copy
        self.pid = self._popen.pid
        _OWNED_PIDS.add(self.pid)
        self.started_monotonic = time.monotonic()
        self._tell_watchdog(f"G {self.pid}\n".encode())
        self._next_scan_at = self.started_monotonic + _TREE_SCAN_AT_S[0]
        self.refresh_tree()
        for stream_name, pipe in (("stdout", self._popen.stdout), ("stderr", self._popen.stderr)):
            if pipe is not None:
                fd = pipe.fileno()
                os.set_blocking(fd, False)
                self._streams[fd] = stream_name
                self._selector.register(fd, selectors.EVENT_READ, stream_name)
        return self

    @property
    def pgid(self) -> int | None:
        """The process group id (== pid: the command leads its own session)."""
        return self.pid

    def _tell_watchdog(self, message: bytes) -> None:
        if self._watchdog_w is not None:
            try:
                os.write(self._watchdog_w, message)
            except OSError:
                pass

    def _close_watchdog(self) -> None:
        if self._watchdog_w is not None:
            os.close(self._watchdog_w)
            self._watchdog_w = None
        if self._watchdog is not None:
            try:
                self._watchdog.wait(timeout=self.watchdog_grace_s + 2)
            except subprocess.TimeoutExpired:
                self._watchdog.kill()
                self._watchdog.wait()
            _OWNED_PIDS.discard(self._watchdog.pid)
            self._watchdog = None

    # ---- reading -----------------------------------------------------------------------------
    @property
    def output_open(self) -> bool:
        """True while any output stream has not reached EOF."""
        return bool(self._streams)

    def read(self, timeout_s: float, extra_fds: Iterable[int] = ()) -> list[tuple[str, bytes]]:
        """Wait up to ``timeout_s`` for output; return (stream, chunk) pairs read, where an
        empty chunk marks that stream's EOF. Returns early when any of ``extra_fds`` (e.g. a
        signal wake-up pipe) is readable; the caller drains those."""
        self._check_leader()
        if not self._streams:
            if extra_fds:
                selectors_ = selectors.DefaultSelector()
                for fd in extra_fds:
                    selectors_.register(fd, selectors.EVENT_READ)
                selectors_.select(timeout_s)
                selectors_.close()
            else:
                time.sleep(timeout_s)
            return []
        extra = list(extra_fds)
        for fd in extra:
            self._selector.register(fd, selectors.EVENT_READ, None)
        try:
            ready = self._selector.select(timeout_s)
        finally:
            for fd in extra:
                self._selector.unregister(fd)
        chunks: list[tuple[str, bytes]] = []
        for key, _ in ready:
            if key.data is None:
                continue
            fd = key.fd
            try:
                chunk = os.read(fd, READ_CHUNK_BYTES)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            chunks.append((key.data, chunk))
            if not chunk:
                self._close_stream(fd)
        self._check_leader()
        return chunks

    def _close_stream(self, fd: int) -> None:
        self._selector.unregister(fd)
        del self._streams[fd]
        # the Popen file objects own these fds: close through them so nothing closes twice
        assert self._popen is not None
        for pipe in (self._popen.stdout, self._popen.stderr):
            if pipe is not None and not pipe.closed and pipe.fileno() == fd:
                pipe.close()

    # ---- state -------------------------------------------------------------------------------
    def _check_leader(self) -> None:
        if self._leader_exit is not None or self.pid is None or self._reaped:
            return
        try:
            info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            info = None
        if info is not None and info.si_pid == self.pid:
            self._leader_exit = info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
            self._leader_exited_at = time.monotonic()

    @property
    def leader_exited(self) -> bool:
        """The command itself (not necessarily all its group) has exited."""
        self._check_leader()
        return self._leader_exit is not None

    @property
    def finished(self) -> bool:
        """Leader exited and either all output was read, or the stragglers had their linger
        time and stop grace (a daemonized grandchild holding our pipe must not hang us)."""
        if not self.leader_exited:
            return False
        if not self._streams:
            return True
        assert self._leader_exited_at is not None
        waited = time.monotonic() - self._leader_exited_at
        return self._killed and waited > self.linger_s + self._stop_grace_s + 1.0

    # ---- the process tree ----------------------------------------------------------------
    def refresh_tree(self, table: dict[int, ProcInfo] | None = None) -> dict[int, ProcInfo]:
        """Track every process of the group and below the leader or any tracked process (and,
        as a subreaper, our own children other than the watchdog); tell the watchdog about
        new ones. Returns the process table used."""
        if self.pid is None:
            return {}
        table = process_table() if table is None else table
        me = os.getpid()
        watchdog_pid = self._watchdog.pid if self._watchdog is not None else -1
        # the gone (reaped) and the reused are forgotten: a tree that forks all the time (a
        # companion's loop: a cat and a sleep a second) would grow the list, and every write
        # watch's look at it, for the whole run
        self._known = {
            pid: start for pid, start in self._known.items() if pid in table and table[pid].starttime == start
        }
        roots = set(self._known)
        if not self._reaped and self.pid in table:
            roots.add(self.pid)
        if not self._reaped:  # once reaped, the group id may belong to someone else
            roots |= {pid for pid, info in table.items() if info.pgrp == self.pid}
        if _IS_SUBREAPER:
            roots |= {pid for pid, info in table.items() if info.ppid == me and pid not in _OWNED_PIDS}
        found = roots | descendants(roots, table)
        found.discard(me)
        found.discard(watchdog_pid)
        found -= _OWNED_PIDS - {self.pid}
        news = []
        for pid in found:
            if pid not in self._known or self._known[pid] != table[pid].starttime:
                self._known[pid] = table[pid].starttime
                news.append(f"P {pid} {table[pid].starttime}\n")
        if news:
            self._tell_watchdog("".join(news).encode())
        return table

    def _watch_pids(self) -> set[int]:
        """The tree now, cheaply: tracked pids and, through /proc/PID/task/TID/children, every
        process forked below them since the last full scan (a full /proc scan every quarter
        second would cost milliseconds on a database node with thousands of processes)."""
        found = set(self._known)
        if self.pid is not None and not self._reaped:
            found.add(self.pid)
        todo = list(found)
        if _IS_SUBREAPER:  # orphans of the tree are reparented to us: our children count too
            todo.append(os.getpid())
        watchdog_pid = self._watchdog.pid if self._watchdog is not None else -1
        others = _OWNED_PIDS - {self.pid}
        while todo:
            pid = todo.pop()
            try:
                tasks = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for task in tasks:
                try:
                    with open(f"/proc/{pid}/task/{task}/children", "rb") as handle:
                        children = handle.read().split()
                except OSError:
                    continue  # gone, or a kernel without CONFIG_PROC_CHILDREN: the scans still add them
                for child in map(int, children):
                    if child not in found and child != watchdog_pid and child not in others:
                        found.add(child)
                        todo.append(child)
        found.discard(os.getpid())
        return found

    def watch_writes(self) -> list[Violation]:
        """One look of the write watch; on a violation by a process of ours (checked against
        a full process table, so a reused pid never counts), SIGKILL to the whole tree."""
        if self.write_watch is None or self.pid is None:
            return []
        found = self.write_watch.check(self._watch_pids())
        if found:
            table = self.refresh_tree()
            ours = set(self.tracked_alive(table))
            found = [violation for violation in found if violation.pid in ours]
        if found:
            self.violations = found
            self.kill()
        return found

    def tracked_alive(self, table: dict[int, ProcInfo] | None = None) -> list[int]:
        """Tracked processes (or group members) still alive, zombies excluded."""
        table = self.refresh_tree(table)
        alive = [pid for pid, start in self._known.items() if _live(table.get(pid)) and table[pid].starttime == start]
        return alive

    @property
    def tracked_pids(self) -> list[int]:
        """The pids tracked (alive, or dead and not yet reaped, at the last look)."""
        return sorted(self._known)

    def _maybe_scan(self, now: float) -> None:
        if now < self._next_scan_at or self.started_monotonic is None:
            return
        self.refresh_tree()
        self._scan_index += 1
        if self._scan_index < len(_TREE_SCAN_AT_S):
            self._next_scan_at = self.started_monotonic + _TREE_SCAN_AT_S[self._scan_index]
        else:
            self._next_scan_at = now + _TREE_SCAN_EVERY_S

    # ---- stopping ----------------------------------------------------------------------------
    def tick(self) -> None:
        """Housekeeping between reads: sample the process tree on schedule; after the leader
        exited, stop its leftovers once they had ``linger_s``; escalate a stop to SIGKILL
        after its grace."""
        was_running = self._leader_exit is None
        self._check_leader()
        now = time.monotonic()
        if was_running and self._leader_exit is not None:
            self.refresh_tree()  # who is left behind, while the leader's zombie still anchors them
        self._maybe_scan(now)
        if self.write_watch is not None and not self._killed and now >= self._next_watch_at:
            self._next_watch_at = now + WRITE_WATCH_INTERVAL_S
            self.watch_writes()
        if (
            self._leader_exit is not None
            and self._stop_sent_at is None
            and self._leader_exited_at is not None
            and now - self._leader_exited_at >= self.linger_s
        ):
            if self.tracked_alive() or self._streams:
                self.stop(grace_s=self.linger_s)
            else:
                self._stop_sent_at = now
                self._killed = True  # nothing left to stop
        if self._stop_sent_at is not None and not self._killed:
            if now - self._stop_sent_at >= self._stop_grace_s:
                self.kill()
            elif self._leader_exit is not None:
                table = process_table()
                left = self.tracked_alive(table)
                if not left:
                    self._killed = True  # everyone left on TERM; nothing to kill
                elif not self._orphans_termed:
                    # the leader is gone without stopping its workers: nobody else will
                    self._orphans_termed = True
                    for pid in left:
                        self._signal_pid(pid, signal.SIGTERM, table)

    def stop(self, grace_s: float) -> None:
        """Send SIGTERM now to the process group, and to tracked processes whose parent is no
        longer a live tracked process (nobody else will pass the stop on to them; fio's
        main process stops its own workers). :meth:`tick` sends SIGKILL to everything
        tracked after ``grace_s``. Idempotent."""
        if self._stop_sent_at is not None or self.pgid is None:
            return
        self._stop_sent_at = time.monotonic()
        self._stop_grace_s = grace_s
        table = self.refresh_tree()
        self.signal_group(signal.SIGTERM)
        alive = set(self.tracked_alive(table))
        for pid in alive:
            info = table[pid]
            if info.pgrp != self.pgid and info.ppid not in alive:
                self._signal_pid(pid, signal.SIGTERM, table)

    @property
    def stop_requested(self) -> bool:
        """A stop (SIGTERM to the group) was sent."""
        return self._stop_sent_at is not None

    def kill(self) -> None:
        """SIGKILL to the group and every tracked process (the tree is re-read first)."""
        self._killed = True
        table = self.refresh_tree()
        self.signal_group(signal.SIGKILL)
        for pid in self.tracked_alive(table):
            self._signal_pid(pid, signal.SIGKILL, table)

    def _signal_pid(self, pid: int, sig: int, table: dict[int, ProcInfo]) -> None:
        if self._known.get(pid) != table[pid].starttime:
            return  # a reused pid: not ours
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def signal_group(self, sig: int) -> None:
        """Send ``sig`` to every process of the group (a no-op once it is gone)."""
        if self.pgid is None or self._reaped:
            return
        try:
            os.killpg(self.pgid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    # ---- end ---------------------------------------------------------------------------------
    def reap(self, timeout_s: float = 10.0) -> int:
        """Make sure everything tracked is gone (SIGKILL if anything is left), collect the
        leader's exit status and every tracked child of ours; return the exit status
        (negative: killed by that signal)."""
        if self._reaped:
            assert self.returncode is not None
            return self.returncode
        assert self.pid is not None
        deadline = time.monotonic() + timeout_s
        while not self.leader_exited and time.monotonic() < deadline:
            time.sleep(0.02)
        table = process_table()
        left = self.tracked_alive(table)
        if left and not self._killed:
            # stragglers that no longer hold our pipes: a TERM and a short grace before KILL
            self.signal_group(signal.SIGTERM)
            for pid in left:
                self._signal_pid(pid, signal.SIGTERM, table)
            term_deadline = min(deadline, time.monotonic() + self.linger_s)
            while self.tracked_alive() and time.monotonic() < term_deadline:
                time.sleep(0.05)
        if self.tracked_alive():
            self.kill()
        while self.tracked_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        _, raw_status = os.waitpid(self.pid, 0)
        self.returncode = os.waitstatus_to_exitcode(raw_status)
        self._reaped = True
        _OWNED_PIDS.discard(self.pid)
        if self._popen is not None:
            self._popen.returncode = self.returncode  # Popen must not wait for it again
        # orphans reparented to us (as subreaper) from the group or the tracked tree
        while True:
            try:
                if os.waitid(os.P_PGID, self.pid, os.WEXITED | os.WNOHANG) is None:
                    break
            except ChildProcessError:
                break
        for pid in self._known:
            if pid != self.pid:
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass
        return self.returncode

    def close(self) -> None:
        """Close the pipes, dismiss the watchdog (the group is reaped: nothing to guard)."""
        for fd in list(self._streams):
            self._close_stream(fd)
        self._selector.close()
        if self._reaped:
            self._tell_watchdog(b"done\n")
        self._close_watchdog()

    def __enter__(self) -> SupervisedProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        if self.pid is not None and not self._reaped:
            self.kill()
            self.reap()
        self.close()
